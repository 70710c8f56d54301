// FunctionRef: a non-owning reference to a callable, for a callback that runs only during the
// call it is handed to. Unlike std::function it never allocates.
#pragma once

#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>

namespace replayrt {

template <class Signature>
class FunctionRef;

// Refers to a named callable (an lvalue; a temporary would be gone before the call), which must
// outlive every call through the reference. Empty when default-constructed or made from nullptr;
// calling an empty reference is undefined. Copying copies the reference, not the callable. The
// converting constructors are implicit, so a callable or nullptr is assigned as to a
// std::function.
template <class Result, class... Args>
class FunctionRef<Result(Args...)> {
 public:
  FunctionRef() noexcept = default;
  FunctionRef(std::nullptr_t) noexcept {}
  template <class Callable,
            class = std::enable_if_t<!std::is_same_v<std::remove_cvref_t<Callable>, FunctionRef> &&
                                     std::is_invocable_r_v<Result, Callable &, Args...>>>
  FunctionRef(Callable &callable) noexcept
      : callable_(const_cast<void *>(static_cast<const void *>(std::addressof(callable)))),
        call_(&call_through<Callable>) {}

  Result operator()(Args... args) const { return call_(callable_, std::forward<Args>(args)...); }
  explicit operator bool() const noexcept { return call_ != nullptr; }
  friend bool operator==(const FunctionRef &ref, std::nullptr_t) noexcept {
    return ref.call_ == nullptr;
  }

 private:
  template <class Callable>
  static Result call_through(void *callable, Args... args) {
    return (*static_cast<Callable *>(callable))(std::forward<Args>(args)...);
  }

  void *callable_ = nullptr;
  Result (*call_)(void *, Args...) = nullptr;
};

}  // namespace replayrt
