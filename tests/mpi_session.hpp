#pragma once
// The MPI session of a test program that CTest starts through the MPI launcher: one Team for the
// whole program (MPI is initialized once and finalized at the end), reached through g_team.
#include <boost/test/unit_test.hpp>

#include "normdyn/experiment/team.hpp"

namespace normdyn::test {

inline Team* g_team = nullptr;

struct MpiSession {
  MpiSession() {
    auto& suite = boost::unit_test::framework::master_test_suite();
    static int argc = suite.argc;
    static char** argv = suite.argv;
    g_team = new Team(argc, argv);
    BOOST_TEST_MESSAGE("rank " << g_team->rank() << " of " << g_team->size());
  }
  ~MpiSession() { delete g_team; }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
};

}  // namespace normdyn::test
