//! The tuple arities (1 to 16) for which rows serialize and deserialize: one list, handed
//! to each module's implementing macro.

/// Calls the macro `$m` with every arity as `N => (0 A, 1 B, ...);`.
macro_rules! for_each_tuple_arity {
    ($m:ident) => {
        $m! {
            1 => (0 A);
            2 => (0 A, 1 B);
            3 => (0 A, 1 B, 2 C);
            4 => (0 A, 1 B, 2 C, 3 D);
            5 => (0 A, 1 B, 2 C, 3 D, 4 E);
            6 => (0 A, 1 B, 2 C, 3 D, 4 E, 5 F);
            7 => (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G);
            8 => (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H);
            9 => (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I);
            10 => (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J);
            11 => (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K);
            12 => (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K, 11 L);
            13 => (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K, 11 L, 12 M);
            14 => (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K, 11 L, 12 M, 13 N);
            15 => (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K, 11 L, 12 M, 13 N, 14 O);
            16 => (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K, 11 L, 12 M, 13 N, 14 O, 15 P);
        }
    };
}

pub(crate) use for_each_tuple_arity;
