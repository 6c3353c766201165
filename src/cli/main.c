/* main.c — placeholder entry point until the CLI lands. */
#include "sc-config.h"
#include "smt/smt.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--version") == 0) {
    printf("shardcheck %s (cvc5 %s)\n", SC_VERSION, sc_smt_version());
    return 0;
  }
  fprintf(stderr, "shardcheck: not yet implemented\n");
  return 2;
}
