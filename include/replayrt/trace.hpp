/* trace.hpp: a timeline of host calls and device work, written as Chrome trace-event JSON (the
   format chrome://tracing and Perfetto open). Header-only C++17 over replayrt.hpp: the device
   work comes from the profile calls (Context::profile, Run::profile), so the context records
   task timings only when it was created with profiling on.

   The timeline has two processes:
   - "host": one track per thread that recorded a host slice (host(), HostSlice).
   - "device": one track per device worker. Each task is a slice named
     "<callable>/<task index> <kernel>". Each launch is a slice named after its callable, and
     each piece of work recorded with a name (a replay) is a slice of that name; both span
     their tasks on every worker and appear on every worker track that ran one of those tasks,
     so on each track a replay encloses its launches and a launch its tasks. Work of streams
     that ran at the same time can interleave on a worker, and then the enclosing slices of the
     two overlap: record one stream's work at a time for a timeline that nests.

   Clocks. Host slices are taken with std::chrono::steady_clock. Device records carry the
   device's clock (rrt_task_timing_t): on the simulator that is the same steady clock, and with
   DeviceClock::host_steady both processes share one time axis. On CUDA it is the GPU's
   %globaltimer: with DeviceClock::separate each process's times start at its own earliest
   record, and times are comparable only within a process. Times in the file are microseconds
   from that origin.

   Errors: add_device_work throws std::invalid_argument when the records do not split into the
   launches it is given; Context::profile's rrt::Error propagates (profiling off, no completed
   launch); write() throws std::runtime_error when the file cannot be written. A HostSlice that
   cannot be stored when it ends (out of memory) is dropped.
   Thread safety: every member function may be called from any thread; they share one mutex. */
#ifndef REPLAYRT_TRACE_HPP_
#define REPLAYRT_TRACE_HPP_

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <replayrt/replayrt.hpp>

namespace rrt {

class Trace {
 public:
  using Clock = std::chrono::steady_clock;
  enum class DeviceClock { host_steady, separate };

  /* A host slice on the constructing thread's track, from construction to destruction. */
  class HostSlice {
   public:
    HostSlice(Trace &trace, std::string name)
        : trace_(trace), name_(std::move(name)), start_(Clock::now()) {}
    ~HostSlice() {
      try {
        trace_.add_host_slice(std::move(name_), start_, Clock::now());
      } catch (...) {  // NOLINT(bugprone-empty-catch): a slice that cannot be stored is dropped
      }
    }
    HostSlice(const HostSlice &) = delete;
    HostSlice &operator=(const HostSlice &) = delete;
    HostSlice(HostSlice &&) = delete;
    HostSlice &operator=(HostSlice &&) = delete;

   private:
    Trace &trace_;
    std::string name_;
    Clock::time_point start_;
  };

  explicit Trace(DeviceClock device_clock = DeviceClock::host_steady)
      : device_clock_(device_clock) {}

  /* Names the slices of `callable`'s work recorded from now on: `name`, and each task's kernel
     in program order (naming an id again renames it, as for a second context's callable of the
     same id). A callable that was not named is "callable <id>", its tasks without a kernel
     name. */
  void name_callable(CallableId callable, std::string name, std::vector<std::string> kernels) {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (NamedCallable &named : callables_) {
      if (named.id == callable.value) {
        named.name = std::move(name);
        named.kernels = std::move(kernels);
        return;
      }
    }
    callables_.push_back({callable.value, std::move(name), std::move(kernels)});
  }
  void name_callable(CallableId callable, std::string name, const CallableBuilder &builder) {
    name_callable(callable, std::move(name), builder.task_kernels());
  }

  /* Runs `call` and records it as a host slice named `name` (also when it throws); returns what
     `call` returns. */
  template <typename Call>
  decltype(auto) host(std::string name, Call &&call) {
    const HostSlice slice(*this, std::move(name));
    return std::forward<Call>(call)();
  }
  /* A host slice on the calling thread's track. */
  void add_host_slice(std::string name, Clock::time_point start, Clock::time_point end) {
    const std::lock_guard<std::mutex> lock(mutex_);
    const std::uint32_t track = host_track(std::this_thread::get_id());
    slices_.push_back({std::move(name), Kind::host, track, nanoseconds(start), nanoseconds(end),
                       std::string(), -1, std::string()});
  }

  /* Device work: `timings` as the profile calls return them, the work of `launches` in order
     (one callable for a launch or a run; a graph's kernel-mode launches in capture order for a
     replay). Each launch's records begin where `task` is 0. A non-empty `name` adds a slice of
     that name around all of it. */
  void add_device_work(const std::string &name, const std::vector<CallableId> &launches,
                       const std::vector<rrt_task_timing_t> &timings) {
    const std::vector<std::size_t> starts = launch_starts(timings);
    if (starts.size() != launches.size()) {
      throw std::invalid_argument("rrt::Trace: the records hold " + std::to_string(starts.size()) +
                                  " launches, but " + std::to_string(launches.size()) +
                                  " were named");
    }
    if (timings.empty()) {
      return;
    }
    const std::lock_guard<std::mutex> lock(mutex_);
    for (std::size_t k = 0; k < starts.size(); ++k) {
      const std::size_t end = k + 1 < starts.size() ? starts[k + 1] : timings.size();
      add_launch(launches[k].value, timings, starts[k], end);
    }
    if (!name.empty()) {
      add_enclosing(name, Kind::work, timings, 0, timings.size());
    }
  }
  /* add_device_work over the most recent completed kernel-mode launch or replay of `context`:
     call it after the stream synchronized. */
  void add_device_work(const Context &context, const std::string &name,
                       const std::vector<CallableId> &launches) {
    add_device_work(name, launches, context.profile());
  }

  std::size_t slice_count() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return slices_.size();
  }

  /* The trace-event JSON of everything recorded so far. */
  std::string json() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    std::vector<const Slice *> order;
    order.reserve(slices_.size());
    for (const Slice &slice : slices_) {
      order.push_back(&slice);
    }
    std::sort(order.begin(), order.end(), [](const Slice *a, const Slice *b) {
      return std::make_tuple(a->kind == Kind::host, a->track, a->start_ns, b->end_ns,
                             static_cast<int>(a->kind)) <
             std::make_tuple(b->kind == Kind::host, b->track, b->start_ns, a->end_ns,
                             static_cast<int>(b->kind));
    });
    const std::uint64_t host_origin = origin(true);
    const std::uint64_t device_origin = origin(false);
    std::string out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
    out += "{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"host\"}},\n";
    out += "{\"ph\":\"M\",\"pid\":2,\"name\":\"process_name\",\"args\":{\"name\":\"device\"}}";
    for (std::size_t i = 0; i < host_threads_.size(); ++i) {
      out += ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":" + std::to_string(i) +
             ",\"name\":\"thread_name\",\"args\":{\"name\":\"host thread " + std::to_string(i) +
             "\"}}";
    }
    std::vector<std::uint32_t> workers;
    for (const Slice &slice : slices_) {
      if (slice.kind != Kind::host &&
          std::find(workers.begin(), workers.end(), slice.track) == workers.end()) {
        workers.push_back(slice.track);
      }
    }
    std::sort(workers.begin(), workers.end());
    for (const std::uint32_t worker : workers) {
      out += ",\n{\"ph\":\"M\",\"pid\":2,\"tid\":" + std::to_string(worker) +
             ",\"name\":\"thread_name\",\"args\":{\"name\":\"worker " + std::to_string(worker) +
             "\"}}";
    }
    for (const Slice *slice : order) {
      const bool on_host = slice->kind == Kind::host;
      out += ",\n{\"ph\":\"X\",\"pid\":";
      out += on_host ? "1" : "2";
      out += ",\"tid\":" + std::to_string(slice->track) + ",\"cat\":\"" + category(slice->kind) +
             "\",\"name\":\"" + escaped(slice->name) + "\",\"ts\":" +
             microseconds(slice->start_ns - (on_host ? host_origin : device_origin)) +
             ",\"dur\":" + microseconds(slice->end_ns - slice->start_ns);
      if (slice->kind == Kind::task || slice->kind == Kind::launch) {
        out += ",\"args\":{\"callable\":\"" + escaped(slice->callable) + "\"";
        if (slice->kind == Kind::task) {
          out += ",\"task\":" + std::to_string(slice->task) + ",\"kernel\":\"" +
                 escaped(slice->kernel) + "\"";
        }
        out += "}";
      }
      out += "}";
    }
    out += "\n]}\n";
    return out;
  }

  void write(const std::string &path) const {
    const std::string text = json();
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file.write(text.data(), static_cast<std::streamsize>(text.size()));
    file.close();
    if (!file) {
      throw std::runtime_error("rrt::Trace: cannot write " + path);
    }
  }

 private:
  /* In the order a slice sorts before another of the same span on one track. */
  enum class Kind { host, work, launch, task };
  struct Slice {
    std::string name;
    Kind kind;
    std::uint32_t track;  // host thread index or device worker
    std::uint64_t start_ns;
    std::uint64_t end_ns;
    std::string callable;
    std::int64_t task;
    std::string kernel;
  };
  struct NamedCallable {
    std::int32_t id;
    std::string name;
    std::vector<std::string> kernels;
  };

  static std::uint64_t nanoseconds(Clock::time_point time) {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count());
  }
  static std::string microseconds(std::uint64_t ns) {
    char text[32];
    std::snprintf(text, sizeof text, "%llu.%03llu", static_cast<unsigned long long>(ns / 1000),
                  static_cast<unsigned long long>(ns % 1000));
    return text;
  }
  static const char *category(Kind kind) {
    switch (kind) {
      case Kind::host:
        return "host";
      case Kind::work:
        return "work";
      case Kind::launch:
        return "launch";
      case Kind::task:
        return "task";
    }
    return "";
  }
  static std::string escaped(const std::string &text) {
    std::string out;
    for (const char c : text) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += c;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        char code[8];
        std::snprintf(code, sizeof code, "\\u%04x", static_cast<unsigned>(c));
        out += code;
      } else {
        out += c;
      }
    }
    return out;
  }
  static std::vector<std::size_t> launch_starts(const std::vector<rrt_task_timing_t> &timings) {
    std::vector<std::size_t> starts;
    for (std::size_t i = 0; i < timings.size(); ++i) {
      if (i == 0 || timings[i].task == 0) {
        starts.push_back(i);
      }
    }
    return starts;
  }

  std::uint32_t host_track(std::thread::id thread) {
    for (std::size_t i = 0; i < host_threads_.size(); ++i) {
      if (host_threads_[i] == thread) {
        return static_cast<std::uint32_t>(i);
      }
    }
    host_threads_.push_back(thread);
    return static_cast<std::uint32_t>(host_threads_.size() - 1);
  }
  const NamedCallable *find_callable(std::int32_t id) const {
    for (const NamedCallable &named : callables_) {
      if (named.id == id) {
        return &named;
      }
    }
    return nullptr;
  }
  std::uint64_t origin(bool host) const {
    std::uint64_t earliest = UINT64_MAX;
    for (const Slice &slice : slices_) {
      if (device_clock_ == DeviceClock::host_steady || (slice.kind == Kind::host) == host) {
        earliest = std::min(earliest, slice.start_ns);
      }
    }
    return earliest == UINT64_MAX ? 0 : earliest;
  }

  /* One launch's records [begin, end): a slice per task and the launch around them. */
  void add_launch(std::int32_t id, const std::vector<rrt_task_timing_t> &timings, std::size_t begin,
                  std::size_t end) {
    const NamedCallable *named = find_callable(id);
    const std::string callable = named != nullptr ? named->name : "callable " + std::to_string(id);
    for (std::size_t i = begin; i < end; ++i) {
      const rrt_task_timing_t &timing = timings[i];
      const bool has_kernel = named != nullptr && timing.task < named->kernels.size();
      const std::string kernel = has_kernel ? named->kernels[timing.task] : std::string();
      std::string name = callable + "/" + std::to_string(timing.task);
      if (!kernel.empty()) {
        name += " " + kernel;
      }
      slices_.push_back({std::move(name), Kind::task, timing.worker, timing.start_ns, timing.end_ns,
                         callable, timing.task, kernel});
    }
    add_enclosing(callable, Kind::launch, timings, begin, end);
  }
  /* A slice named `name` over records [begin, end), on every worker that ran one of them. */
  void add_enclosing(const std::string &name, Kind kind,
                     const std::vector<rrt_task_timing_t> &timings, std::size_t begin,
                     std::size_t end) {
    std::uint64_t start_ns = UINT64_MAX;
    std::uint64_t end_ns = 0;
    std::vector<std::uint32_t> workers;
    for (std::size_t i = begin; i < end; ++i) {
      start_ns = std::min(start_ns, timings[i].start_ns);
      end_ns = std::max(end_ns, timings[i].end_ns);
      if (std::find(workers.begin(), workers.end(), timings[i].worker) == workers.end()) {
        workers.push_back(timings[i].worker);
      }
    }
    for (const std::uint32_t worker : workers) {
      slices_.push_back({name, kind, worker, start_ns, end_ns,
                         kind == Kind::launch ? name : std::string(), -1, std::string()});
    }
  }

  mutable std::mutex mutex_;
  DeviceClock device_clock_;
  std::vector<Slice> slices_;
  std::vector<NamedCallable> callables_;
  std::vector<std::thread::id> host_threads_;
};

}  // namespace rrt

#endif /* REPLAYRT_TRACE_HPP_ */
