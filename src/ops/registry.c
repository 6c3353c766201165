/* registry — placeholder until its module lands. */
typedef int sc_placeholder_registry_;
