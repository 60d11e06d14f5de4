/* user.c - the C definition of struct user_struct (testdata/lang). */
typedef struct { int refs; } refcount_t;
struct user_struct {
	refcount_t __count;
	long unix_inflight;
	long pipe_bufs;
};
__attribute__((used)) struct user_struct root_user = { { 1 }, 0, 0 };
