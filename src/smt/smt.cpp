// smt.cpp — the cvc5 bridge (see smt.h).  The only C++ in shardcheck.
//
// Invariants: no exception crosses into C (every extern "C" entry point
// catches everything and answers UNKNOWN / 0); a query is validated before
// any term is built (variable indices, exponents, divisors, sizes), so that
// a malformed query is an error, not undefined behaviour; each check runs
// in a fresh cvc5::Solver (nothing carries over between queries) under
// tlimit-per and rlimit-per, so no call can hang.
#include "smt/smt.h"

#include <cvc5/cvc5.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

struct sc_smt {
  uint32_t tlimit_ms = SC_SMT_DEFAULT_TLIMIT_MS;
  uint64_t rlimit = SC_SMT_DEFAULT_RLIMIT;
  sc_smt_stats stats{};
  std::string last_error;
};

namespace {

using Clock = std::chrono::steady_clock;

// Past this many factors (exponents counted) a query is refused: the
// product x^e is built as e multiplications.
constexpr uint64_t kMaxFactorWeight = 1u << 16;

uint64_t elapsed_us(Clock::time_point t0) {
  auto d = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0);
  return d.count() > 0 ? static_cast<uint64_t>(d.count()) : 0;
}

bool env_u64(const char *name, uint64_t *out) {
  const char *s = std::getenv(name);
  if (!s || !*s)
    return false;
  guint64 v;
  if (!g_ascii_string_to_unsigned(s, 10, 0, G_MAXUINT64, &v, nullptr))
    return false;
  *out = v;
  return true;
}

void check_poly(const sc_sym_query &q, const sc_sym_qpoly &p, uint64_t *weight) {
  if (p.n_terms && !p.terms)
    throw std::invalid_argument("invalid query: polynomial without terms array");
  for (uint32_t i = 0; i < p.n_terms; i++) {
    const sc_sym_qterm &t = p.terms[i];
    if (t.n_factors && !t.factors)
      throw std::invalid_argument("invalid query: term without factors array");
    for (uint32_t j = 0; j < t.n_factors; j++) {
      if (t.factors[j].var >= q.n_vars)
        throw std::invalid_argument("invalid query: variable index " +
                                    std::to_string(t.factors[j].var) + " out of range");
      if (t.factors[j].exp == 0)
        throw std::invalid_argument("invalid query: exponent 0");
      *weight += t.factors[j].exp;
    }
  }
}

void check_lit(const sc_sym_query &q, const sc_sym_qlit &l, uint64_t *weight) {
  switch (l.rel) {
  case SC_SYM_REL_EQ:
  case SC_SYM_REL_NE:
  case SC_SYM_REL_GE:
    break;
  case SC_SYM_REL_DIV:
    if (l.k < 1)
      throw std::invalid_argument("invalid query: divisor " + std::to_string(l.k) +
                                  " in a divisibility literal (must be >= 1)");
    break;
  default:
    throw std::invalid_argument("invalid query: unknown relation");
  }
  check_poly(q, l.p, weight);
}

void validate(const sc_sym_query *q) {
  if (!q)
    throw std::invalid_argument("invalid query: NULL");
  if (q->n_vars && !q->vars)
    throw std::invalid_argument("invalid query: no variables array");
  if (q->n_clauses && !q->clauses)
    throw std::invalid_argument("invalid query: no clauses array");
  uint64_t weight = 0;
  for (uint32_t i = 0; i < q->n_clauses; i++) {
    const sc_sym_qclause &c = q->clauses[i];
    if (c.n_lits == 0 || !c.lits)
      throw std::invalid_argument("invalid query: empty clause " + std::to_string(i));
    for (uint32_t j = 0; j < c.n_lits; j++)
      check_lit(*q, c.lits[j], &weight);
  }
  check_lit(*q, q->goal, &weight);
  if (weight > kMaxFactorWeight)
    throw std::invalid_argument("invalid query: too large (" + std::to_string(weight) +
                                " factors)");
}

bool is_nonlinear_poly(const sc_sym_qpoly &p) {
  for (uint32_t i = 0; i < p.n_terms; i++) {
    uint64_t degree = 0;
    for (uint32_t j = 0; j < p.terms[i].n_factors; j++)
      degree += p.terms[i].factors[j].exp;
    if (degree >= 2)
      return true;
  }
  return false;
}

bool is_nonlinear(const sc_sym_query *q) {
  for (uint32_t i = 0; i < q->n_clauses; i++)
    for (uint32_t j = 0; j < q->clauses[i].n_lits; j++)
      if (is_nonlinear_poly(q->clauses[i].lits[j].p))
        return true;
  return is_nonlinear_poly(q->goal.p);
}

// One solver with the query's variables, bounds and context asserted.
class Encoder {
 public:
  Encoder(const sc_sym_query *q, uint64_t rlimit) : q_(q) {
    solver_.setOption("incremental", "true");
    solver_.setLogic(is_nonlinear(q) ? "QF_NIA" : "QF_LIA");
    if (rlimit)
      solver_.setOption("rlimit-per", std::to_string(rlimit));
    cvc5::Sort int_sort = solver_.getIntegerSort();
    vars_.reserve(q->n_vars);
    for (uint32_t i = 0; i < q->n_vars; i++) {
      const sc_sym_qvar &v = q->vars[i];
      std::string name = v.name ? v.name : "v" + std::to_string(i);
      cvc5::Term x = solver_.mkConst(int_sort, name);
      vars_.push_back(x);
      if (v.has_lo)
        solver_.assertFormula(solver_.mkTerm(cvc5::Kind::GEQ, {x, solver_.mkInteger(v.lo)}));
      if (v.has_hi)
        solver_.assertFormula(solver_.mkTerm(cvc5::Kind::LEQ, {x, solver_.mkInteger(v.hi)}));
    }
  }

  void assert_context() {
    for (uint32_t i = 0; i < q_->n_clauses; i++) {
      const sc_sym_qclause &c = q_->clauses[i];
      std::vector<cvc5::Term> lits;
      for (uint32_t j = 0; j < c.n_lits; j++)
        lits.push_back(lit(c.lits[j]));
      solver_.assertFormula(lits.size() == 1 ? lits[0] : solver_.mkTerm(cvc5::Kind::OR, lits));
    }
  }

  cvc5::Term goal() { return lit(q_->goal); }

  // One check under a wall-time limit (ms, >= 1).
  cvc5::Result check(const cvc5::Term *assumption, uint64_t tlimit_ms) {
    solver_.setOption("tlimit-per", std::to_string(tlimit_ms));
    return assumption ? solver_.checkSatAssuming(*assumption) : solver_.checkSat();
  }

  cvc5::Solver &solver() { return solver_; }

 private:
  cvc5::Term poly(const sc_sym_qpoly &p) {
    std::vector<cvc5::Term> sum;
    for (uint32_t i = 0; i < p.n_terms; i++) {
      const sc_sym_qterm &t = p.terms[i];
      std::vector<cvc5::Term> prod;
      if (t.coeff != 1 || t.n_factors == 0)
        prod.push_back(solver_.mkInteger(t.coeff));
      for (uint32_t j = 0; j < t.n_factors; j++)
        for (uint32_t e = 0; e < t.factors[j].exp; e++)
          prod.push_back(vars_[t.factors[j].var]);
      sum.push_back(prod.size() == 1 ? prod[0] : solver_.mkTerm(cvc5::Kind::MULT, prod));
    }
    if (sum.empty())
      return solver_.mkInteger(0);
    return sum.size() == 1 ? sum[0] : solver_.mkTerm(cvc5::Kind::ADD, sum);
  }

  cvc5::Term lit(const sc_sym_qlit &l) {
    cvc5::Term p = poly(l.p), zero = solver_.mkInteger(0);
    switch (l.rel) {
    case SC_SYM_REL_EQ:
      return solver_.mkTerm(cvc5::Kind::EQUAL, {p, zero});
    case SC_SYM_REL_NE:
      return solver_.mkTerm(cvc5::Kind::DISTINCT, {p, zero});
    case SC_SYM_REL_GE:
      return solver_.mkTerm(cvc5::Kind::GEQ, {p, zero});
    case SC_SYM_REL_DIV: {
      // SMT-LIB's mod by a positive constant is floor modulo
      cvc5::Term m = solver_.mkTerm(cvc5::Kind::INTS_MODULUS, {p, solver_.mkInteger(l.k)});
      return solver_.mkTerm(cvc5::Kind::EQUAL, {m, zero});
    }
    }
    throw std::invalid_argument("invalid query: unknown relation");
  }

  const sc_sym_query *q_;
  cvc5::Solver solver_;
  std::vector<cvc5::Term> vars_;
};

sc_smt_result record(sc_smt *smt, const cvc5::Result &r) {
  smt->stats.checks++;
  if (r.isSat()) {
    smt->stats.sat++;
    return SC_SMT_SAT;
  }
  if (r.isUnsat()) {
    smt->stats.unsat++;
    return SC_SMT_UNSAT;
  }
  smt->stats.unknown++;
  cvc5::UnknownExplanation why = r.getUnknownExplanation();
  if (why == cvc5::UnknownExplanation::TIMEOUT || why == cvc5::UnknownExplanation::RESOURCEOUT)
    smt->stats.limit_hits++;
  if (why == cvc5::UnknownExplanation::TIMEOUT)
    smt->stats.time_hits++;
  return SC_SMT_UNKNOWN;
}

void fail(sc_smt *smt, const char *what) {
  smt->stats.errors++;
  try {
    smt->last_error = what;
  } catch (...) {
  }
}

// ms left of a budget that started at T0, or 0 when it is spent (counted
// as a hit of the wall-time limit: the check it would have made is not made)
uint64_t remaining_ms(sc_smt *smt, Clock::time_point t0) {
  uint64_t used = elapsed_us(t0) / 1000;
  if (used < smt->tlimit_ms)
    return smt->tlimit_ms - used;
  smt->stats.limit_hits++;
  smt->stats.time_hits++;
  return 0;
}

sc_smt_result check_impl(sc_smt *smt, const sc_sym_query *q, sc_smt_mode mode,
                         Clock::time_point t0) {
  validate(q);
  Encoder enc(q, smt->rlimit);
  enc.assert_context();
  cvc5::Term assumption;
  if (mode == SC_SMT_WITH_GOAL)
    assumption = enc.goal();
  else if (mode == SC_SMT_WITH_NEGATION)
    assumption = enc.goal().notTerm();
  uint64_t left = remaining_ms(smt, t0);
  if (left == 0)
    return SC_SMT_UNKNOWN;
  return record(smt, enc.check(mode == SC_SMT_CONTEXT ? nullptr : &assumption, left));
}

sc_truth decide_impl(sc_smt *smt, const sc_sym_query *q, Clock::time_point t0) {
  validate(q);
  Encoder enc(q, smt->rlimit);
  enc.assert_context();
  cvc5::Term goal = enc.goal(), negation = goal.notTerm();
  // context sat: SAT known, UNSAT known, or not known yet
  sc_smt_result context = SC_SMT_UNKNOWN;
  uint64_t left = remaining_ms(smt, t0);
  if (left == 0)
    return SC_UNKNOWN;
  sc_smt_result neg = record(smt, enc.check(&negation, left));
  if (neg == SC_SMT_SAT)
    context = SC_SMT_SAT;
  sc_smt_result pos = SC_SMT_UNKNOWN;
  if (neg != SC_SMT_UNSAT) {
    if ((left = remaining_ms(smt, t0)) == 0)
      return SC_UNKNOWN;
    pos = record(smt, enc.check(&goal, left));
    if (pos == SC_SMT_SAT)
      context = SC_SMT_SAT;
    if (pos != SC_SMT_UNSAT)
      return SC_UNKNOWN; // neither is entailed, or cvc5 could not tell
  }
  // one of them is unsat: meaningful only if the context is consistent
  if (context == SC_SMT_UNKNOWN) {
    if ((left = remaining_ms(smt, t0)) == 0)
      return SC_UNKNOWN;
    context = record(smt, enc.check(nullptr, left));
    if (context == SC_SMT_UNSAT)
      smt->stats.inconsistent++;
    if (context != SC_SMT_SAT)
      return SC_UNKNOWN;
  }
  return neg == SC_SMT_UNSAT ? SC_YES : SC_NO;
}

sc_truth oracle_decide(void *user, const sc_sym_query *query) {
  return sc_smt_decide(static_cast<sc_smt *>(user), query);
}

// The assumptions' satisfiability (sym.h): one check of the context, under
// the smaller resource limit SC_SMT_SATISFIABLE_RLIMIT (asked at every load
// whose assumptions leave facts: what cvc5 does not settle in a few
// thousand steps stays UNKNOWN, as before the check existed).
sc_truth oracle_satisfiable(void *user, const sc_sym_query *query) {
  sc_smt *smt = static_cast<sc_smt *>(user);
  uint64_t rlimit = smt->rlimit;
  if (rlimit == 0 || rlimit > SC_SMT_SATISFIABLE_RLIMIT)
    smt->rlimit = SC_SMT_SATISFIABLE_RLIMIT;
  sc_smt_result r = sc_smt_check(smt, query, SC_SMT_CONTEXT);
  smt->rlimit = rlimit;
  switch (r) {
  case SC_SMT_SAT:
    return SC_YES;
  case SC_SMT_UNSAT:
    return SC_NO;
  case SC_SMT_UNKNOWN:
    break;
  }
  return SC_UNKNOWN;
}

const sc_sym_oracle kOracle = {oracle_decide, oracle_satisfiable};

} // namespace

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

extern "C" sc_smt *sc_smt_new(void) {
  try {
    sc_smt *smt = new sc_smt();
    uint64_t v;
    if (env_u64("SC_SMT_TLIMIT_MS", &v) && v >= 1 && v <= G_MAXUINT32)
      smt->tlimit_ms = static_cast<uint32_t>(v);
    if (env_u64("SC_SMT_RLIMIT", &v))
      smt->rlimit = v;
    return smt;
  } catch (...) {
    g_error("sc_smt_new: out of memory");
  }
}

extern "C" void sc_smt_free(sc_smt *smt) {
  delete smt;
}

extern "C" void sc_smt_set_limits(sc_smt *smt, uint32_t tlimit_ms, uint64_t rlimit) {
  g_return_if_fail(smt != nullptr);
  smt->tlimit_ms = tlimit_ms ? tlimit_ms : 1;
  smt->rlimit = rlimit;
}

extern "C" void sc_smt_get_limits(const sc_smt *smt, uint32_t *tlimit_ms, uint64_t *rlimit) {
  g_return_if_fail(smt != nullptr);
  if (tlimit_ms)
    *tlimit_ms = smt->tlimit_ms;
  if (rlimit)
    *rlimit = smt->rlimit;
}

extern "C" sc_smt_result sc_smt_check(sc_smt *smt, const sc_sym_query *query, sc_smt_mode mode) {
  g_return_val_if_fail(smt != nullptr, SC_SMT_UNKNOWN);
  Clock::time_point t0 = Clock::now();
  sc_smt_result r = SC_SMT_UNKNOWN;
  try {
    r = check_impl(smt, query, mode, t0);
  } catch (const std::exception &e) {
    fail(smt, e.what());
  } catch (...) {
    fail(smt, "unknown exception");
  }
  smt->stats.time_us += elapsed_us(t0);
  return r;
}

extern "C" sc_truth sc_smt_decide(sc_smt *smt, const sc_sym_query *query) {
  g_return_val_if_fail(smt != nullptr, SC_UNKNOWN);
  Clock::time_point t0 = Clock::now();
  sc_truth r = SC_UNKNOWN;
  try {
    r = decide_impl(smt, query, t0);
  } catch (const std::exception &e) {
    fail(smt, e.what());
  } catch (...) {
    fail(smt, "unknown exception");
  }
  smt->stats.queries++;
  if (r == SC_YES)
    smt->stats.yes++;
  else if (r == SC_NO)
    smt->stats.no++;
  else
    smt->stats.undecided++;
  smt->stats.time_us += elapsed_us(t0);
  return r;
}

extern "C" const sc_sym_oracle *sc_smt_oracle(void) {
  return &kOracle;
}

extern "C" void sc_smt_attach(sc_smt *smt, sc_symtab *st) {
  g_return_if_fail(smt != nullptr && st != nullptr);
  sc_symtab_set_oracle(st, &kOracle, smt);
}

extern "C" void sc_smt_get_stats(const sc_smt *smt, sc_smt_stats *stats) {
  g_return_if_fail(smt != nullptr && stats != nullptr);
  *stats = smt->stats;
}

extern "C" char *sc_smt_stats_to_string(const sc_smt_stats *s) {
  g_return_val_if_fail(s != nullptr, nullptr);
  g_autofree char *time_hits =
      s->time_hits ? g_strdup_printf(" (time %" G_GUINT64_FORMAT ")", s->time_hits) : g_strdup("");
  return g_strdup_printf("cvc5 queries %" G_GUINT64_FORMAT " (yes %" G_GUINT64_FORMAT
                         ", no %" G_GUINT64_FORMAT ", unknown %" G_GUINT64_FORMAT
                         ", inconsistent %" G_GUINT64_FORMAT "), checks %" G_GUINT64_FORMAT
                         " (sat %" G_GUINT64_FORMAT ", unsat %" G_GUINT64_FORMAT
                         ", unknown %" G_GUINT64_FORMAT ", limit hits %" G_GUINT64_FORMAT
                         "%s), errors %" G_GUINT64_FORMAT ", time %.3f s",
                         s->queries, s->yes, s->no, s->undecided, s->inconsistent, s->checks,
                         s->sat, s->unsat, s->unknown, s->limit_hits, time_hits, s->errors,
                         static_cast<double>(s->time_us) / 1e6);
}

extern "C" const char *sc_smt_last_error(const sc_smt *smt) {
  g_return_val_if_fail(smt != nullptr, "");
  return smt->last_error.c_str();
}
