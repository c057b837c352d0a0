// The Boost.Test module of kubesim's integration tests (each test starts kubesim).
#define BOOST_TEST_MODULE kubesim_itest
#include <boost/test/unit_test.hpp>
