// rust.rs: the record writer of the Rust judge (calls.h), after the tests.
// crate::__sq_emit!(i, v) writes "\x1esandq-call I TEXT\n", TEXT v's
// canonical encoding (docs/formats.md, "Call results"): integers, floats,
// bool, char, strings, Vec/slices/arrays/VecDeque, tuples, Option, Box,
// HashMap/BTreeMap, HashSet/BTreeSet, nested. A value of any other type
// writes "!type" rather than failing to compile. Paths are spelled out and
// nothing is imported, so no `use` of the candidate's collides.

#[allow(dead_code)]
trait __SqEnc {
    fn __sq_enc(&self, o: &mut String, depth: usize);
}

#[allow(dead_code)]
fn __sq_text<T: __SqEnc + ?Sized>(v: &T, depth: usize) -> String {
    let mut s = String::new();
    v.__sq_enc(&mut s, depth);
    s
}

macro_rules! __sq_enc_integer {
    ($($t:ty)*) => {$(
        impl __SqEnc for $t {
            fn __sq_enc(&self, o: &mut String, _: usize) { o.push_str(&self.to_string()); }
        }
    )*};
}
__sq_enc_integer!(i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize);

// f32 widened to f64 first; integral values below 2^53 as integers
impl __SqEnc for f64 {
    fn __sq_enc(&self, o: &mut String, _: usize) {
        let x = *self;
        if x.is_nan() {
            o.push_str("NaN");
        } else if x.is_infinite() {
            o.push_str(if x > 0.0 { "Infinity" } else { "-Infinity" });
        } else if x == x.floor() && x.abs() < 9007199254740992.0 {
            o.push_str(&(x as i64).to_string());
        } else {
            o.push_str(&format!("{:?}", x));
        }
    }
}
impl __SqEnc for f32 {
    fn __sq_enc(&self, o: &mut String, d: usize) { (*self as f64).__sq_enc(o, d) }
}
impl __SqEnc for bool {
    fn __sq_enc(&self, o: &mut String, _: usize) { o.push_str(if *self { "true" } else { "false" }); }
}
impl __SqEnc for () {
    fn __sq_enc(&self, o: &mut String, _: usize) { o.push_str("null"); }
}
impl __SqEnc for str {
    fn __sq_enc(&self, o: &mut String, _: usize) {
        o.push('"');
        for c in self.chars() {
            match c {
                '"' => o.push_str("\\\""),
                '\\' => o.push_str("\\\\"),
                '\u{8}' => o.push_str("\\b"),
                '\u{c}' => o.push_str("\\f"),
                '\n' => o.push_str("\\n"),
                '\r' => o.push_str("\\r"),
                '\t' => o.push_str("\\t"),
                c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
                c => o.push(c),
            }
        }
        o.push('"');
    }
}
impl __SqEnc for String {
    fn __sq_enc(&self, o: &mut String, d: usize) { self.as_str().__sq_enc(o, d) }
}
impl __SqEnc for char {
    fn __sq_enc(&self, o: &mut String, d: usize) { self.to_string().__sq_enc(o, d) }
}
impl<T: __SqEnc + ?Sized> __SqEnc for &T {
    fn __sq_enc(&self, o: &mut String, d: usize) { (**self).__sq_enc(o, d) }
}
impl<T: __SqEnc + ?Sized> __SqEnc for &mut T {
    fn __sq_enc(&self, o: &mut String, d: usize) { (**self).__sq_enc(o, d) }
}
impl<T: __SqEnc + ?Sized> __SqEnc for Box<T> {
    fn __sq_enc(&self, o: &mut String, d: usize) { (**self).__sq_enc(o, d) }
}
impl<T: __SqEnc + ?Sized> __SqEnc for std::rc::Rc<T> {
    fn __sq_enc(&self, o: &mut String, d: usize) { (**self).__sq_enc(o, d) }
}
impl<T: __SqEnc> __SqEnc for Option<T> {
    fn __sq_enc(&self, o: &mut String, d: usize) {
        match self {
            Some(x) => x.__sq_enc(o, d + 1),
            None => o.push_str("null"),
        }
    }
}

#[allow(dead_code)]
fn __sq_seq<'a, T: __SqEnc + 'a, I: Iterator<Item = &'a T>>(it: I, sort: bool, o: &mut String, d: usize) {
    if d > 200 {
        o.push_str("!deep");
        return;
    }
    let mut items: Vec<String> = it.map(|x| __sq_text(x, d + 1)).collect();
    if sort {
        items.sort();
    }
    o.push('[');
    o.push_str(&items.join(","));
    o.push(']');
}
#[allow(dead_code)]
fn __sq_map<'a, K: __SqEnc + 'a, V: __SqEnc + 'a, I: Iterator<Item = (&'a K, &'a V)>>(it: I, o: &mut String, d: usize) {
    let mut items: Vec<String> =
        it.map(|(k, v)| format!("{}:{}", __sq_text(k, d + 1), __sq_text(v, d + 1))).collect();
    items.sort(); // String's order is its UTF-8 bytes' order
    o.push('{');
    o.push_str(&items.join(","));
    o.push('}');
}
impl<T: __SqEnc> __SqEnc for [T] {
    fn __sq_enc(&self, o: &mut String, d: usize) { __sq_seq(self.iter(), false, o, d) }
}
impl<T: __SqEnc, const N: usize> __SqEnc for [T; N] {
    fn __sq_enc(&self, o: &mut String, d: usize) { __sq_seq(self.iter(), false, o, d) }
}
impl<T: __SqEnc> __SqEnc for Vec<T> {
    fn __sq_enc(&self, o: &mut String, d: usize) { __sq_seq(self.iter(), false, o, d) }
}
impl<T: __SqEnc> __SqEnc for std::collections::VecDeque<T> {
    fn __sq_enc(&self, o: &mut String, d: usize) { __sq_seq(self.iter(), false, o, d) }
}
impl<T: __SqEnc, S> __SqEnc for std::collections::HashSet<T, S> {
    fn __sq_enc(&self, o: &mut String, d: usize) { __sq_seq(self.iter(), true, o, d) }
}
impl<T: __SqEnc> __SqEnc for std::collections::BTreeSet<T> {
    fn __sq_enc(&self, o: &mut String, d: usize) { __sq_seq(self.iter(), true, o, d) }
}
impl<K: __SqEnc, V: __SqEnc, S> __SqEnc for std::collections::HashMap<K, V, S> {
    fn __sq_enc(&self, o: &mut String, d: usize) { __sq_map(self.iter(), o, d) }
}
impl<K: __SqEnc, V: __SqEnc> __SqEnc for std::collections::BTreeMap<K, V> {
    fn __sq_enc(&self, o: &mut String, d: usize) { __sq_map(self.iter(), o, d) }
}
macro_rules! __sq_enc_tuple {
    ($(($($n:tt $t:ident),+))*) => {$(
        impl<$($t: __SqEnc),+> __SqEnc for ($($t,)+) {
            fn __sq_enc(&self, o: &mut String, d: usize) {
                let items: Vec<String> = vec![$(__sq_text(&self.$n, d + 1)),+];
                o.push('[');
                o.push_str(&items.join(","));
                o.push(']');
            }
        }
    )*};
}
__sq_enc_tuple!((0 A) (0 A, 1 B) (0 A, 1 B, 2 C) (0 A, 1 B, 2 C, 3 D) (0 A, 1 B, 2 C, 3 D, 4 E)
                (0 A, 1 B, 2 C, 3 D, 4 E, 5 F) (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G)
                (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H));

// The text of any value: through __SqEnc when its type has it, else
// "!type" (method resolution prefers the impl that needs no autoref).
#[allow(dead_code)]
struct __SqW<'a, T: ?Sized>(&'a T);
#[allow(dead_code)]
trait __SqViaEnc {
    fn __sq_any_text(&self) -> String;
}
impl<'a, T: __SqEnc + ?Sized> __SqViaEnc for __SqW<'a, T> {
    fn __sq_any_text(&self) -> String { __sq_text(self.0, 0) }
}
#[allow(dead_code)]
trait __SqViaOther {
    fn __sq_any_text(&self) -> String;
}
impl<'a, T: ?Sized> __SqViaOther for &__SqW<'a, T> {
    fn __sq_any_text(&self) -> String { format!("!{}", std::any::type_name::<T>()) }
}

// one write of the whole record on fd 1, unbuffered: a later exit loses nothing
#[allow(dead_code)]
fn __sq_write(i: usize, text: &str) {
    let rec = format!("\x1esandq-call {} {}\n", i, text);
    let mut out = std::io::stdout().lock();
    let _ = std::io::Write::write_all(&mut out, rec.as_bytes());
    let _ = std::io::Write::flush(&mut out);
}

#[macro_export]
macro_rules! __sq_emit {
    ($i:expr, $v:expr) => {{
        #[allow(unused_imports)]
        use crate::{__SqViaEnc as _, __SqViaOther as _};
        let __sq_v = $v;
        crate::__sq_write($i, &(&crate::__SqW(&__sq_v)).__sq_any_text());
    }};
}
