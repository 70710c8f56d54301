// A C++ consumer of the installed package: the header-only C++ API over the shared library,
// built once as C++17 and once as C++20 with every warning an error.
#include <cstdio>
#include <vector>

#include <replayrt/replayrt.hpp>

int main() {
  try {
    rrt::Context ctx;
    ctx.program_init();
    rrt::CallableBuilder callable;
    const rrt::Operand x = callable.param("x", RRT_DTYPE_F32, {8}, RRT_DIR_IN);
    const rrt::Operand y = callable.param("y", RRT_DTYPE_F32, {8}, RRT_DIR_OUT);
    callable.task("scale", {x, y, rrt::Operand::immediate_f32(3.0F)});
    const rrt::CallableId id = ctx.prepare(callable);
    std::vector<float> in{1, 2, 3, 4, 5, 6, 7, 8};
    std::vector<float> out(8, 0.0F);
    rrt::Args args;
    args.host(in).host(out);
    ctx.run(id, args);
    for (std::size_t i = 0; i < in.size(); ++i) {
      if (out[i] != 3.0F * in[i]) {
        std::fprintf(stderr, "element %zu: %g, expected %g\n", i, static_cast<double>(out[i]),
                     static_cast<double>(3.0F * in[i]));
        return 1;
      }
    }
    std::printf("replayrt C++ consumer (C++%ld) ran a callable\n", __cplusplus / 100 % 100);
    return 0;
  } catch (const rrt::Error &error) {
    std::fprintf(stderr, "%s: %s\n", error.status_name(), error.what());
    return 1;
  }
}
