/* Anonymous structs declared `struct { ... } x, y;` 30 levels deep: 2^31 - 2 members
   when every one is expanded (testdata/README.md). */
struct S { struct { struct { struct { struct { struct { struct { struct { struct { struct { struct { struct { struct { struct { struct { struct { struct { struct { struct { struct { struct { struct { struct { struct { struct { struct { struct { struct { struct { struct { struct { int v; } x, y; } x, y; } x, y; } x, y; } x, y; } x, y; } x, y; } x, y; } x, y; } x, y; } x, y; } x, y; } x, y; } x, y; } x, y; } x, y; } x, y; } x, y; } x, y; } x, y; } x, y; } x, y; } x, y; } x, y; } x, y; } x, y; } x, y; } x, y; } x, y; } x, y; };
struct S s_instance;
