"""What another thread can do while a call runs."""

import threading
import time


def turns_taken_while(call):
    """Runs `call` on another thread; returns how many 1 ms turns this thread took while the
    call ran. A call that blocks while holding the GIL leaves this thread at most a turn or two
    (before the call begins), one that lets go of the GIL leaves it many."""
    entered = threading.Event()

    def body():
        entered.set()
        call()

    thread = threading.Thread(target=body)
    thread.start()
    entered.wait()
    turns = 0
    while thread.is_alive():
        time.sleep(0.001)
        turns += 1
    thread.join()
    return turns
