// The one Boost.Test module of envgate's unit tests; suites live in test/<module>/.
#define BOOST_TEST_MODULE envgate
#include <boost/test/unit_test.hpp>
