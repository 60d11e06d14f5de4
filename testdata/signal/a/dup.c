/* a/dup.c - one of two files named dup.c: a local dup_counter and a local
 * touch() that the new build removes (pairing by basename would pair the
 * old a/dup.c:dup_counter with the new b/dup.c one). */
#ifndef NEW
static int dup_counter = 1;
static __attribute__((noinline, used)) int touch(void) { return dup_counter++; }
#endif
__attribute__((used)) int a_marker = 5;
