// java.java: the record writer of the Java judge (calls.h), a class after
// the Problem class. __Sq.emit(i, v) writes "\x1esandq-call I TEXT\n", TEXT
// v's canonical encoding (docs/formats.md, "Call results"): boxed numbers,
// Boolean, Character, String, Optional, List/Set/any Iterable (javatuples'
// Pair too), Map, arrays, nested. Numbers are compared by value whatever
// their boxed class, where .equals would tell an Integer 1 from a Long 1.
class __Sq {
    static String enc(Object v, int depth) {
        if (depth > 200) return "!deep";
        if (v == null) return "null";
        if (v instanceof java.util.Optional) {
            java.util.Optional<?> o = (java.util.Optional<?>) v;
            return o.isPresent() ? enc(o.get(), depth + 1) : "null";
        }
        if (v instanceof Boolean) return ((Boolean) v) ? "true" : "false";
        if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte
                || v instanceof java.math.BigInteger)
            return v.toString();
        if (v instanceof Number) return real(((Number) v).doubleValue());
        if (v instanceof Character || v instanceof CharSequence) return string(v.toString());
        if (v instanceof java.util.Map) {
            java.util.List<String> items = new java.util.ArrayList<>();
            for (java.util.Map.Entry<?, ?> e : ((java.util.Map<?, ?>) v).entrySet())
                items.add(enc(e.getKey(), depth + 1) + ":" + enc(e.getValue(), depth + 1));
            return "{" + String.join(",", sorted(items)) + "}";
        }
        if (v instanceof java.util.Map.Entry) {
            java.util.Map.Entry<?, ?> e = (java.util.Map.Entry<?, ?>) v;
            return "[" + enc(e.getKey(), depth + 1) + "," + enc(e.getValue(), depth + 1) + "]";
        }
        if (v instanceof Iterable) {
            java.util.List<String> items = new java.util.ArrayList<>();
            for (Object x : (Iterable<?>) v) items.add(enc(x, depth + 1));
            return "[" + String.join(",", v instanceof java.util.Set ? sorted(items) : items) + "]";
        }
        if (v.getClass().isArray()) {
            java.util.List<String> items = new java.util.ArrayList<>();
            int n = java.lang.reflect.Array.getLength(v);
            for (int k = 0; k < n; k++) items.add(enc(java.lang.reflect.Array.get(v, k), depth + 1));
            return "[" + String.join(",", items) + "]";
        }
        return "!" + v.getClass().getName();
    }

    // a float widened to double first; integral values below 2^53 as integers
    static String real(double x) {
        if (Double.isNaN(x)) return "NaN";
        if (Double.isInfinite(x)) return x > 0 ? "Infinity" : "-Infinity";
        if (x == Math.floor(x) && Math.abs(x) < 9007199254740992.0) return Long.toString((long) x);
        return Double.toString(x);
    }

    static String string(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (int k = 0; k < s.length(); k++) {
            char c = s.charAt(k);
            switch (c) {
            case '"': b.append("\\\""); break;
            case '\\': b.append("\\\\"); break;
            case '\b': b.append("\\b"); break;
            case '\f': b.append("\\f"); break;
            case '\n': b.append("\\n"); break;
            case '\r': b.append("\\r"); break;
            case '\t': b.append("\\t"); break;
            default:
                if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                else b.append(c);
            }
        }
        return b.append('"').toString();
    }

    // sorted bytewise by their UTF-8 text
    static java.util.List<String> sorted(java.util.List<String> items) {
        items.sort((a, c) -> java.util.Arrays.compareUnsigned(a.getBytes(java.nio.charset.StandardCharsets.UTF_8),
                c.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        return items;
    }

    // unbuffered, on fd 1 itself: a later System.exit or System.setOut loses nothing
    static final java.io.FileOutputStream out = new java.io.FileOutputStream(java.io.FileDescriptor.out);

    static void emit(int i, Object v) {
        String text;
        try {
            text = enc(v, 0);
        } catch (RuntimeException | StackOverflowError e) {
            text = "!unencodable";
        }
        try {
            out.write(("\u001esandq-call " + i + " " + text + "\n").getBytes(java.nio.charset.StandardCharsets.UTF_8));
        } catch (java.io.IOException e) {
            // stdout gone: the record is missing, the call failed
        }
    }
}
