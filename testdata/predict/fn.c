/* fn.c - functions of one unit; ADD_FN adds one in the middle, so every function
 * after it moves: 16-byte aligned at -O2, unaligned at -Os. */
extern int use_data(int);
int f_one(int x) { return use_data(x) * 3 + 1; }
int f_two(int x) { return f_one(x) ^ 0x55; }
#ifdef ADD_FN
__attribute__((noinline)) int f_added(int x) { return f_two(x) + 7; }
#endif
int f_three(int x) { return f_two(x) - x; }
int f_four(int x) { return f_three(x) * f_one(x); }
void _start(void) { f_four(1); }
