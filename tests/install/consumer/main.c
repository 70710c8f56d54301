/* A consumer of the installed package: links the shared library through find_package. */
#include <stdio.h>
#include <string.h>

#include <replayrt/replayrt.h>

int main(void) {
  if (strcmp(rrt_status_name(RRT_ERR_STALE_ADDRESS), "RRT_ERR_STALE_ADDRESS") != 0) {
    fprintf(stderr, "unexpected status name\n");
    return 1;
  }
  printf("replayrt consumer linked: %s\n", rrt_status_name(RRT_OK));
  return 0;
}
