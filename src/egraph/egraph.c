/* egraph — placeholder until its module lands. */
typedef int sc_placeholder_egraph_;
