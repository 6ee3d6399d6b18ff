// Team's point-to-point messages between MPI processes. An MPI program: CTest runs it through
// mpirun with 2 processes (tests/CMakeLists.txt).
//
// A send returns at once, however large the message and however late the peer polls (a blocking
// send spins on the core of the process sending, which an ensemble's worker needs); the messages
// from one process arrive complete and in the order sent, across tags and sizes.
#define BOOST_TEST_MODULE team
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <string>
#include <thread>

#include "mpi_session.hpp"
#include "normdyn/experiment/team.hpp"

using namespace normdyn;

namespace {

using test::g_team;
using test::MpiSession;
BOOST_TEST_GLOBAL_FIXTURE(MpiSession);

// Far above the shared-memory eager limit (4 KiB), where a blocking send waits for the receiver.
constexpr std::size_t kLarge = std::size_t{1} << 20;
// The receiver starts polling this late; a send that waits for it takes at least as long.
constexpr auto kReceiverDelay = std::chrono::milliseconds(2000);
// What a send may take: copying a mebibyte, on a loaded machine, is far below it.
constexpr double kSendSeconds = 0.5;

std::string text_of(int i) {
  const std::size_t size = i % 2 == 0 ? 10 : 100'000 + static_cast<std::size_t>(i);
  std::string s(size, '\0');
  for (std::size_t k = 0; k < size; ++k) s[k] = static_cast<char>('a' + (k + static_cast<std::size_t>(i)) % 26);
  return s;
}

Team::Message receive() {
  for (;;) {
    if (auto m = g_team->try_receive()) return std::move(*m);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_send_returns_before_the_peer_polls) {
  BOOST_REQUIRE_EQUAL(g_team->size(), 2);
  g_team->max(0);  // both start together
  if (g_team->rank() == 1) {
    const std::string large(kLarge, 'x');
    const auto t0 = std::chrono::steady_clock::now();
    g_team->send(0, 7, large);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    BOOST_TEST(seconds < kSendSeconds);
    g_team->send(0, 8, std::to_string(seconds));
  } else {
    std::this_thread::sleep_for(kReceiverDelay);
    const Team::Message m = receive();
    BOOST_TEST(m.source == 1);
    BOOST_TEST(m.tag == 7);
    BOOST_TEST(m.text == std::string(kLarge, 'x'));
    const Team::Message took = receive();
    BOOST_TEST(took.tag == 8);
    BOOST_TEST_MESSAGE("the sender's send took " << took.text << " s");
  }
  g_team->max(0);
}

BOOST_AUTO_TEST_CASE(messages_arrive_whole_and_in_the_order_sent) {
  constexpr int kMessages = 60;
  g_team->max(0);
  if (g_team->rank() == 1) {
    for (int i = 0; i < kMessages; ++i) g_team->send(0, 100 + i % 3, text_of(i));
  } else {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    for (int i = 0; i < kMessages; ++i) {
      const Team::Message m = receive();
      BOOST_TEST_REQUIRE(m.tag == 100 + i % 3, "message " << i);
      BOOST_TEST_REQUIRE(m.text == text_of(i), "message " << i);
    }
  }
  g_team->max(0);
}
