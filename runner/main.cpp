#include "runner/app.h"

int main(int argc, char** argv) {
    return envgate::run_main(argc, argv);
}
