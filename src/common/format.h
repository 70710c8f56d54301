// printf-style formatting into std::string (the toolchain's <format> is not available).
#pragma once

#include <string>

namespace replayrt {

[[gnu::format(printf, 1, 2)]] std::string format(const char *fmt, ...);

}  // namespace replayrt
