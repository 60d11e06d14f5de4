/* b/dup.c - the other dup.c, unchanged between the builds. */
static int dup_counter = 2;
static __attribute__((noinline, used)) int touch(void) { return dup_counter += 3; }
__attribute__((used)) int b_marker = 6;

/* The write-hot neighbour lonely_count (main.c) loses in the new build. */
typedef struct { volatile unsigned int slock; } spinlock_t;
__attribute__((used)) spinlock_t busy_lock = { 1 };
