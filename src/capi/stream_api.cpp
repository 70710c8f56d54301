// Streams, events, capture and graph replay.
#include <algorithm>
#include <cstddef>
#include <mutex>
#include <vector>

#include "capi/api_guard.h"
#include "capi/handles.h"
#include "capi/stream_lookup.h"
#include "common/format.h"

using replayrt::Status;
using replayrt::capi::guarded;
using replayrt::capi::require_non_null;

namespace replayrt::capi {

Status check_stream_of(const rrt_context_s *ctx, const rrt_stream_s *stream) {
  RRT_RETURN_IF_ERROR(require_non_null(stream, "stream"));
  if (stream->context != ctx) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT, "the stream belongs to another context");
  }
  return Status::ok();
}

std::vector<Stream *> streams_of(const rrt_context_s &ctx) {
  std::vector<Stream *> streams;
  streams.reserve(ctx.streams.size());
  for (rrt_stream_s *stream : ctx.streams) {
    streams.push_back(stream->stream.get());
  }
  return streams;
}

}  // namespace replayrt::capi

namespace {

Status check_same_context(const rrt_event_s *event, const rrt_stream_s *stream) {
  RRT_RETURN_IF_ERROR(require_non_null(event, "event"));
  RRT_RETURN_IF_ERROR(require_non_null(stream, "stream"));
  if (event->context != stream->context) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT,
                         "the event and the stream belong to different contexts");
  }
  return Status::ok();
}

// Records or waits on `event` through `enqueue` (a call of the stream). While the stream
// captures, the capture holds a reference on the event from then on: the event must outlive the
// capture and the graph it becomes. An owner's capture of a wrapped stream holds none: its end
// and its graph's destruction are never seen here, so the caller keeps the event alive. The
// whole call runs under the capture's lock, which a begin capture holds until the capture has
// begun, so no capture begins between the look at the stream and the enqueue. The
// note's room is reserved before the enqueue, so a host allocation failure of the note changes
// nothing and a captured record or wait is always noted.
template <typename Enqueue>
Status enqueue_event_operation(rrt_stream_s *stream, rrt_event_s *event, Enqueue enqueue) {
  const std::lock_guard<std::mutex> lock(stream->capture_mutex);
  if (!stream->stream->is_capturing() || stream->stream->capture_is_foreign()) {
    return enqueue();
  }
  std::vector<rrt_event_s *> &noted = stream->capture_events;
  const bool known = std::find(noted.begin(), noted.end(), event) != noted.end();
  if (!known && noted.size() == noted.capacity()) {
    noted.reserve(std::max<std::size_t>(4, 2 * noted.size()));
  }
  RRT_RETURN_IF_ERROR(enqueue());
  if (!known) {
    noted.push_back(event);
    event->graph_references.fetch_add(1);
  }
  return Status::ok();
}

// Drops the references of events a capture recorded but handed to no graph. The caller holds
// the stream's capture lock.
void release_captured_events(rrt_stream_s *stream) {
  for (rrt_event_s *event : stream->capture_events) {
    event->graph_references.fetch_sub(1);
  }
  stream->capture_events.clear();
}

}  // namespace

extern "C" {

RRT_API rrt_status_t rrt_stream_create(rrt_context_t ctx, rrt_stream_t *out) {
  return guarded("rrt_stream_create", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_non_null(ctx, "ctx"));
    RRT_RETURN_IF_ERROR(require_non_null(out, "out"));
    auto stream = std::make_unique<rrt_stream_s>();
    stream->context = ctx;
    RRT_RETURN_IF_ERROR(ctx->engine->create_stream(&stream->stream));
    const std::lock_guard<std::mutex> lock(ctx->mutex);
    ctx->streams.insert(stream.get());
    *out = stream.release();
    return Status::ok();
  });
}

RRT_API rrt_status_t rrt_stream_destroy(rrt_stream_t stream) {
  return guarded("rrt_stream_destroy", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_non_null(stream, "stream"));
    if (stream->stream->is_capturing()) {
      return Status::error(RRT_ERR_INVALID_STATE,
                           "the stream is capturing; end the capture before destroying it");
    }
    rrt_context_s *ctx = stream->context;
    ctx->engine->before_stream_destroy(*stream->stream);
    Status pending = stream->stream->synchronize();
    {
      const std::lock_guard<std::mutex> lock(ctx->mutex);
      ctx->streams.erase(stream);
    }
    delete stream;
    return pending;
  });
}

RRT_API rrt_status_t rrt_stream_synchronize(rrt_stream_t stream) {
  return guarded("rrt_stream_synchronize", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_non_null(stream, "stream"));
    return stream->stream->synchronize();
  });
}

RRT_API rrt_status_t rrt_stream_query(rrt_stream_t stream, int *out_done) {
  return guarded("rrt_stream_query", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_non_null(stream, "stream"));
    RRT_RETURN_IF_ERROR(require_non_null(out_done, "out_done"));
    *out_done = stream->stream->query() ? 1 : 0;
    return Status::ok();
  });
}

RRT_API rrt_status_t rrt_event_create(rrt_context_t ctx, rrt_event_t *out) {
  return guarded("rrt_event_create", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_non_null(ctx, "ctx"));
    RRT_RETURN_IF_ERROR(require_non_null(out, "out"));
    auto event = std::make_unique<rrt_event_s>();
    event->context = ctx;
    RRT_RETURN_IF_ERROR(ctx->engine->create_event(&event->event));
    ctx->live_events.fetch_add(1);
    *out = event.release();
    return Status::ok();
  });
}

RRT_API rrt_status_t rrt_event_record(rrt_event_t event, rrt_stream_t stream) {
  return guarded("rrt_event_record", [&]() -> Status {
    RRT_RETURN_IF_ERROR(check_same_context(event, stream));
    return enqueue_event_operation(stream, event,
                                   [&] { return stream->stream->record_event(*event->event); });
  });
}

RRT_API rrt_status_t rrt_stream_wait_event(rrt_stream_t stream, rrt_event_t event) {
  return guarded("rrt_stream_wait_event", [&]() -> Status {
    RRT_RETURN_IF_ERROR(check_same_context(event, stream));
    return enqueue_event_operation(stream, event,
                                   [&] { return stream->stream->wait_event(*event->event); });
  });
}

RRT_API rrt_status_t rrt_event_synchronize(rrt_event_t event) {
  return guarded("rrt_event_synchronize", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_non_null(event, "event"));
    return event->event->synchronize();
  });
}

RRT_API rrt_status_t rrt_event_query(rrt_event_t event, int *out_done) {
  return guarded("rrt_event_query", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_non_null(event, "event"));
    RRT_RETURN_IF_ERROR(require_non_null(out_done, "out_done"));
    *out_done = event->event->query() ? 1 : 0;
    return Status::ok();
  });
}

RRT_API rrt_status_t rrt_event_destroy(rrt_event_t event) {
  return guarded("rrt_event_destroy", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_non_null(event, "event"));
    const int references = event->graph_references.load();
    if (references != 0) {
      return Status::error(RRT_ERR_INVALID_STATE,
                           replayrt::format("%d graphs or captures in progress record or wait "
                                            "on this event; destroy them first",
                                            references));
    }
    // A failure the record carried stays pending on the stream that recorded it, which
    // reports it.
    event->event->wait();
    event->context->live_events.fetch_sub(1);
    delete event;
    return Status::ok();
  });
}

RRT_API rrt_status_t rrt_stream_begin_capture(rrt_stream_t stream) {
  return guarded("rrt_stream_begin_capture", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_non_null(stream, "stream"));
    if (stream->stream->is_capturing()) {
      return Status::error(RRT_ERR_INVALID_STATE, "the stream is already capturing");
    }
    // Held until the capture has begun, so that an event record or wait (which runs under it)
    // comes wholly before the capture or wholly inside it.
    const std::lock_guard<std::mutex> lock(stream->capture_mutex);
    auto release_events = [stream] { release_captured_events(stream); };
    return stream->context->engine->begin_capture(*stream->stream, release_events);
  });
}

RRT_API rrt_status_t rrt_stream_end_capture(rrt_stream_t stream, rrt_graph_t *out) {
  return guarded("rrt_stream_end_capture", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_non_null(stream, "stream"));
    RRT_RETURN_IF_ERROR(require_non_null(out, "out"));
    auto graph = std::make_unique<rrt_graph_s>();
    graph->context = stream->context;
    Status ended =
        stream->context->engine->end_capture(*stream->stream, &graph->graph, &graph->profile_tasks);
    if (!ended.is_ok()) {
      if (!stream->stream->is_capturing()) {
        // The capture was discarded: so are the references it held on its events.
        const std::lock_guard<std::mutex> lock(stream->capture_mutex);
        for (rrt_event_s *event : stream->capture_events) {
          event->graph_references.fetch_sub(1);
        }
        stream->capture_events.clear();
      }
      return ended;
    }
    {
      const std::lock_guard<std::mutex> lock(stream->capture_mutex);
      graph->events.swap(stream->capture_events);
    }
    stream->context->live_graphs.fetch_add(1);
    *out = graph.release();
    return Status::ok();
  });
}

RRT_API rrt_status_t rrt_graph_replay(rrt_graph_t graph, rrt_stream_t stream) {
  return guarded("rrt_graph_replay", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_non_null(graph, "graph"));
    RRT_RETURN_IF_ERROR(replayrt::capi::check_stream_of(graph->context, stream));
    return graph->context->engine->replay(*graph->graph, *stream->stream, graph->profile_tasks);
  });
}

RRT_API rrt_status_t rrt_graph_destroy(rrt_graph_t graph) {
  return guarded("rrt_graph_destroy", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_non_null(graph, "graph"));
    for (rrt_event_s *event : graph->events) {
      event->graph_references.fetch_sub(1);
    }
    graph->context->live_graphs.fetch_sub(1);
    delete graph;
    return Status::ok();
  });
}

}  // extern "C"
