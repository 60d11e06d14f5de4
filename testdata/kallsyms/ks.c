/* ks.c - one unit of a kernel-shaped link with kallsyms tables (build.sh): its
 * functions and data, strings in .rodata.str, and 32-byte-aligned objects in their
 * own section placed after all of .rodata, as SCHED_DATA's sched classes are
 * (STRUCT_ALIGN()). ADD_FN adds a function and a static object: the tables grow. */
struct cls { long ops[5]; };
extern void sink(const char *);
int counter = 1;
static int hits;
#define CLS(name, n) const struct cls name##_cls __attribute__((aligned(8), section("__cls"), used)) = { { n } }
CLS(stop, 1);
CLS(fair, 2);
CLS(idle, 3);
int ks_one(int x) { sink("the first function of the unit"); return x * 3 + counter; }
int ks_two(int x) { sink("and the second one"); return ks_one(x) ^ 0x55; }
#ifdef ADD_FN
static int added_state = 7;
__attribute__((noinline)) int ks_added_function(int x) { return ks_two(x) + added_state++; }
#endif
int ks_three(int x) { hits++; return ks_two(x) - x; }
__attribute__((noinline)) void sink(const char *s) { while (*s) counter += *s++; }
void _start(void) { ks_three(1); }
