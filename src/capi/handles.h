// The structs behind the C ABI's opaque handles.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include <replayrt/replayrt.h>

#include "platform/device.h"
#include "runtime/engine.h"

// Owns the engine and counts the handles created from it, so that destroy can refuse while
// any of them lives. `mutex` guards `streams` and `caller_allocations`.
struct rrt_context_s {
  std::unique_ptr<replayrt::Engine> engine;
  rrt_platform_t platform = RRT_PLATFORM_SIM;
  std::mutex mutex;
  std::set<rrt_stream_s *> streams;
  std::set<void *> caller_allocations;
  std::atomic<int> live_events{0};
  std::atomic<int> live_graphs{0};
  std::atomic<int> live_runs{0};
};

// Events recorded or waited on while capturing are collected here and handed to the graph.
// The capture, then the graph, holds a reference on each (rrt_event_s::graph_references), which
// keeps the event from being destroyed while either lives. `capture_mutex` guards the list.
struct rrt_stream_s {
  rrt_context_s *context = nullptr;
  std::unique_ptr<replayrt::Stream> stream;
  std::mutex capture_mutex;
  std::vector<rrt_event_s *> capture_events;
};

struct rrt_event_s {
  rrt_context_s *context = nullptr;
  std::unique_ptr<replayrt::Event> event;
  std::atomic<int> graph_references{0};  // graphs and captures in progress that record it
};

struct rrt_graph_s {
  rrt_context_s *context = nullptr;
  std::unique_ptr<replayrt::Graph> graph;
  std::vector<rrt_event_s *> events;
  std::uint32_t profile_tasks = 0;  // the task records its kernel-mode launches write
};

struct rrt_run_s {
  rrt_context_s *context = nullptr;
  std::unique_ptr<replayrt::ProgramRun> run;
};
