/* Fixture for the type model and pahole's struct text (see FACTS.md).
 * Built by build.sh; every struct here is listed by pahole into pahole.txt. */

typedef struct { int counter; } atomic_t;
typedef struct { unsigned int slock; } spinlock_t;

/* Bitfields around byte holes, an explicit `:0`, and bit holes. */
struct bits_holes {
	char c;
	unsigned int a:3;
	unsigned int b:5;
	long l;
	unsigned short s:4;
	unsigned int :0;
	unsigned int after_force:2;
	char tail;
};

/* Nested anonymous members: a union holding a named anonymous struct and an
 * unnamed one, an array of anonymous structs, a flexible array at the end. */
struct with_anon {
	int kind;
	union {
		struct { short x; char y; } pt;
		struct { long a; char b; };
		unsigned long raw;
	};
	struct { char flag:1; int n; } meta[2];
	char tail[];
};

/* Arrays of function pointers, const/volatile arrays, const vs pointer-to-const. */
struct fnptrs {
	void (*handlers[4])(int);
	int (*one)(const char *, ...);
	const int cvals[4];
	volatile unsigned char regs[8];
	const char *msg;
	char *const fixed;
	atomic_t refs;
};

/* A member with a forced alignment, and a struct that ends with padding. */
struct aligned_member {
	char c;
	long l __attribute__((aligned(64)));
	struct bits_holes inner;
	char last;
};

struct packed_one {
	char c;
	int i;
} __attribute__((packed));

const char *greeting = "hi";
char *const fixed_ptr = 0;
spinlock_t *lock_ptr;
static struct {
	spinlock_t lock;
	int x;
} anon_locked __attribute__((used));
void (*callbacks[4])(int);
struct fnptrs fp_table;
struct bits_holes bh;
struct with_anon wa;
struct aligned_member am;
struct packed_one po;
atomic_t counters[4];

void touch(void);
void touch(void)
{
	anon_locked.x++;
	lock_ptr = &anon_locked.lock;
}

/* Anonymous enums as member types: pahole lists their enumerators inline. */
struct with_enum {
	enum { E_NONE, E_SOME = 5, E_NEG = -1 } state;
	unsigned char c;
	enum { P_A = 1, P_B = 2 } __attribute__((packed)) small;
	enum { B_X = 3 } bits:4;
};
struct with_enum we;

/* A pointer to an anonymous struct: pahole lists the struct it points at. */
struct with_ptr_anon {
	struct {
		int a;
		long b;
	} *parts;
	int n;
};
struct with_ptr_anon wpa;

/* Member struct types pahole 1.32 notes after the member ("XXX last struct has
 * ..."): a flexible array, embedded flexible arrays (also through a typedef), tail
 * padding in bytes and in bits, holes and bit holes, and their combinations. */
struct flex_tail {
	int n;
	char data[];
};
typedef struct flex_tail flex_t;
struct flex_hole {
	char c;
	long l;
	int n;
	char data[];
};
struct bits_both {
	char c;
	unsigned int a:3;
	unsigned int :2;
	unsigned int b:1;
};
struct embeds {
	struct flex_tail ft;
	long x;
};
struct via_typedef {
	flex_t t;
	int n;
};
struct member_gaps {
	struct flex_hole fh;
	struct bits_both bb;
	struct embeds em;
	struct via_typedef vt;
	struct bits_holes inner;
	union { struct flex_hole in_union; long w; } u;
	struct flex_tail last;
};
/* Only a parameter's type: no object moves the fixture's data symbols. */
void gaps_use(struct member_gaps *p);
void gaps_use(struct member_gaps *p)
{
	p->em.x++;
}
