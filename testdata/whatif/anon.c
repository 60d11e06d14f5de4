/* anon.c - members inside anonymous structs and unions, shaped like struct
 * sk_buff's: an anonymous union holding an anonymous struct (the list links and
 * the length), a second anonymous struct, a union of members of different sizes;
 * embedded by value in struct pkt_holder, with instances, an array and a per-CPU
 * copy; struct pkt_grouped holds members declared with struct_group(). build.sh builds it once per change (the macros below, empty by default,
 * keep every variant's line numbers). */
typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned char u8;

#ifndef LEN_DIM
#define LEN_DIM
#endif
#ifndef STAMP_DIM
#define STAMP_DIM [2]
#endif
#ifndef MARK_DIM
#define MARK_DIM
#endif
#ifndef NAME_DIM
#define NAME_DIM [12]
#endif
#ifndef HASH_ALIGN
#define HASH_ALIGN
#endif
#ifndef LEN_FIRST
#define LEN_FIRST
#endif
#ifndef LEN_HERE
#define LEN_HERE u32 len LEN_DIM;
#endif
#ifndef AFTER_PROTO
#define AFTER_PROTO
#endif
#ifndef AFTER_FLAGS
#define AFTER_FLAGS
#endif
#ifndef GROUP_HASH_DIM
#define GROUP_HASH_DIM
#endif

struct pkt {
	union {
		struct {
			LEN_FIRST
			struct pkt *next;
			struct pkt *prev;
			LEN_HERE
			u16 proto; AFTER_PROTO
			u8 flags; AFTER_FLAGS
		};
		u64 stamp STAMP_DIM;
	};
	struct {
		u32 hash HASH_ALIGN;
		u16 queue;
		u8 cloned;
		u8 kind;
	};
	union {
		u64 cookie;
		u32 mark MARK_DIM;
		char name NAME_DIM;
	};
	long users;
};

struct pkt_holder {
	int refs;
	struct pkt last;
	long count;
};

/* The kernel's struct_group(): the members declared twice, in an anonymous struct
 * and in a named one, so that they can be used by name or as a group. */
#define struct_group(NAME, MEMBERS...) \
	union { struct { MEMBERS }; struct { MEMBERS } NAME; }

struct pkt_grouped {
	long id;
	struct_group(hdr,
		u16 proto;
		u32 hash GROUP_HASH_DIM;
		u8 flags;
	);
	long tail;
};

#define DEFINE_PER_CPU(type, name) \
	__attribute__((section(".data..percpu"))) __typeof__(type) name

/* Initialised past its type: its flexible array's bytes follow the struct (as
 * init_mm's cpu_bitmap does). Defined first, GCC puts it last in .data. */
struct pkt_flex { struct pkt p; char tail[]; } pkt_flex_one = { .tail = "0123456789" };
int pkt_first = 1;
struct pkt pkt_one = { .users = 1 };
short pkt_between = 2;
struct pkt pkt_ring[3] = { { .users = 3 } };
long pkt_after_ring = 4;
struct pkt_holder pkt_holder = { .refs = 5 };
int pkt_last = 6;
struct pkt pkt_bss[2];
long pkt_bss_after;
struct pkt_grouped pkt_grouped_one = { .id = 7 };
DEFINE_PER_CPU(long, pkt_pcpu_before);
DEFINE_PER_CPU(struct pkt, pkt_pcpu);
DEFINE_PER_CPU(int, pkt_pcpu_after);

void _start(void) { }
