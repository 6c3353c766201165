// smt.cpp — the cvc5 bridge (see smt.h).  The only C++ in shardcheck; no
// exception may cross into C, so every entry point catches everything.
#include "smt/smt.h"

#include <cvc5/cvc5.h>

#include <string>

extern "C" const char *sc_smt_version(void) {
  static std::string version;
  try {
    if (version.empty()) {
      cvc5::Solver solver;
      version = solver.getVersion();
    }
    return version.c_str();
  } catch (...) {
    return "unknown";
  }
}

extern "C" int sc_smt_selftest(void) {
  try {
    cvc5::Solver solver;
    solver.setLogic("QF_LIA");
    solver.setOption("tlimit-per", "2000");
    cvc5::Sort int_sort = solver.getIntegerSort();
    cvc5::Term x = solver.mkConst(int_sort, "x");
    cvc5::Term zero = solver.mkInteger(0);
    solver.assertFormula(solver.mkTerm(cvc5::Kind::GT, {x, zero}));
    solver.assertFormula(solver.mkTerm(cvc5::Kind::LT, {x, zero}));
    return solver.checkSat().isUnsat() ? 1 : 0;
  } catch (...) {
    return 0;
  }
}
