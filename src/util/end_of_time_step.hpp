// Callbacks at the end of a simulation time step: once no process is left to run at the
// current time (nothing runnable, no delta notification pending). One SystemC method serves
// every client, so two clients never keep deferring to each other's pending notification.
// Leaves out: time steps nobody asked for, and activity the callbacks themselves make at the
// current time (a client that needs the end of that too asks again).
#pragma once

#include <algorithm>
#include <systemc>
#include <utility>
#include <vector>

namespace trnsim::util {

class EndOfTimeStep {
 public:
  /// One request per client at a time.
  class Client {
   public:
    virtual ~Client() { EndOfTimeStep::forget(*this); }
    /// Nothing else is left to run at the current time, which is at or after a time this client
    /// asked for (request()); the request is used up.
    virtual void time_step_ended() = 0;

   protected:
    /// Asks for the end of the time step of `at` (sc_max_time(): for nothing), replacing the
    /// standing request unless it is that already.
    void ask_for(const sc_core::sc_time& at) {
      if (at == asked_for_) return;
      asked_for_ = at;
      if (at == sc_core::sc_max_time()) {
        EndOfTimeStep::forget(*this);
      } else {
        EndOfTimeStep::request(*this, at);
      }
    }
    /// The standing request's time (sc_max_time(): none), for ask_for().
    const sc_core::sc_time& asked_for() const { return asked_for_; }

   private:
    friend class EndOfTimeStep;
    sc_core::sc_time asked_for_ = sc_core::sc_max_time();
  };

  /// Calls `client.time_step_ended()` once the time step of `at` (at or after the current
  /// simulation time) has ended; replaces the client's earlier request, if any.
  static void request(Client& client, const sc_core::sc_time& at) {
    EndOfTimeStep& self = instance();
    const auto mine = std::find_if(self.requests_.begin(), self.requests_.end(),
                                   [&client](const Request& r) { return r.second == &client; });
    if (mine != self.requests_.end()) {
      mine->first = at;
    } else {
      self.requests_.emplace_back(at, &client);
    }
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    self.wake_.notify(at > now ? at - now : sc_core::SC_ZERO_TIME);
  }
  /// Drops `client`'s request.
  static void forget(Client& client) {
    if (!exists()) return;
    std::vector<Request>& requests = instance().requests_;
    std::erase_if(requests,
                  [&client](const Request& request) { return request.second == &client; });
  }

 private:
  using Request = std::pair<sc_core::sc_time, Client*>;

  EndOfTimeStep() {
    sc_core::sc_spawn_options method;
    method.spawn_method();
    method.set_sensitivity(&wake_);
    method.dont_initialize();
    sc_core::sc_spawn([this] { run(); }, "end_of_time_step", &method);
  }
  /// Made on first use and never destroyed: its process and event belong to the simulation,
  /// which outlives every static destructor's chance to remove them cleanly.
  static EndOfTimeStep*& holder() {
    static EndOfTimeStep* self = nullptr;
    return self;
  }
  static bool exists() { return holder() != nullptr; }
  static EndOfTimeStep& instance() {
    EndOfTimeStep*& self = holder();
    if (self == nullptr) self = new EndOfTimeStep();
    return *self;
  }

  void run() {
    if (sc_core::sc_pending_activity_at_current_time(sc_core::sc_get_curr_simcontext())) {
      wake_.notify(sc_core::SC_ZERO_TIME);  // others still run at this time
      return;
    }
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    due_.clear();
    std::erase_if(requests_, [&](const Request& request) {
      if (request.first > now) return false;
      due_.push_back(request.second);
      return true;
    });
    for (Client* client : due_) client->asked_for_ = sc_core::sc_max_time();
    for (Client* client : due_) client->time_step_ended();  // it may ask again
    if (requests_.empty()) return;
    const auto next = std::min_element(requests_.begin(), requests_.end());
    wake_.notify(next->first > now ? next->first - now : sc_core::SC_ZERO_TIME);
  }

  sc_core::sc_event wake_;
  std::vector<Request> requests_;
  std::vector<Client*> due_;  ///< scratch: the clients run() calls back
};

}  // namespace trnsim::util
