// cpp.cpp: the record writer of the C++ judge (calls.h), placed before the
// candidate's code. __sq_emit(i, v) writes "\x1esandq-call I TEXT\n", TEXT
// v's canonical encoding (docs/formats.md, "Call results"), for the types
// MultiPL-E's C++ tests compare: integers, bool, float, std::string,
// std::vector, std::tuple/std::pair, std::map, std::optional, std::nullopt,
// std::variant, std::any (of the common types) and any nesting of them.
// Stricter than ==, which takes 'A' == 65 and a vector<long> only against
// its own type: a char is a string here, element types never matter.
// MultiPL-E's untagged Union_* structs can not be read: they write "!type".
// No POSIX header: a candidate's own read() or write() must not clash.
#include <algorithm>
#include <any>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <variant>
#include <vector>

namespace __sq {

template <class T, class = void> struct is_range : std::false_type {};
template <class T>
struct is_range<T, std::void_t<decltype(std::begin(std::declval<const T &>())), decltype(std::end(std::declval<const T &>()))>>
    : std::true_type {};
template <class T, class = void> struct has_key : std::false_type {};
template <class T> struct has_key<T, std::void_t<typename T::key_type>> : std::true_type {};
template <class T, class = void> struct has_mapped : std::false_type {};
template <class T> struct has_mapped<T, std::void_t<typename T::mapped_type>> : std::true_type {};
template <class T> struct is_optional : std::false_type {};
template <class U> struct is_optional<std::optional<U>> : std::true_type {};
template <class T> struct is_variant : std::false_type {};
template <class... U> struct is_variant<std::variant<U...>> : std::true_type {};
template <class T> struct is_pair : std::false_type {};
template <class A, class B> struct is_pair<std::pair<A, B>> : std::true_type {};
template <class T> struct is_tuple : std::false_type {};
template <class... U> struct is_tuple<std::tuple<U...>> : std::true_type {};
template <class T> struct is_string : std::false_type {};
template <class Tr, class A> struct is_string<std::basic_string<char, Tr, A>> : std::true_type {};
template <class Tr> struct is_string<std::basic_string_view<char, Tr>> : std::true_type {};
template <class T> struct is_char : std::bool_constant<std::is_same_v<T, char>> {};

inline void put_string(std::string &o, const char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  o += '"';
  for (size_t k = 0; k < n; k++) {
    unsigned char c = (unsigned char)s[k];
    switch (c) {
    case '"': o += "\\\""; break;
    case '\\': o += "\\\\"; break;
    case '\b': o += "\\b"; break;
    case '\f': o += "\\f"; break;
    case '\n': o += "\\n"; break;
    case '\r': o += "\\r"; break;
    case '\t': o += "\\t"; break;
    default:
      if (c < 0x20) {
        o += "\\u00";
        o += hex[c >> 4];
        o += hex[c & 15];
      } else {
        o += (char)c;
      }
    }
  }
  o += '"';
}

template <class I> void put_integer(std::string &o, I v) {
  using U = std::conditional_t<(sizeof(I) > 8), unsigned __int128, unsigned long long>;
  bool neg = false;
  U u;
  if constexpr (std::is_signed_v<I>) {
    neg = v < 0;
    u = neg ? (U)0 - (U)v : (U)v;
  } else {
    u = (U)v;
  }
  char buf[48];
  int k = (int)sizeof buf;
  do buf[--k] = (char)('0' + (int)(u % 10)); while ((u /= 10) != 0);
  if (neg) buf[--k] = '-';
  o.append(buf + k, sizeof buf - (size_t)k);
}

// float widened to double first; integral values below 2^53 as integers
inline void put_double(std::string &o, double x) {
  if (std::isnan(x)) o += "NaN";
  else if (std::isinf(x)) o += x > 0 ? "Infinity" : "-Infinity";
  else if (x == std::floor(x) && std::fabs(x) < 9007199254740992.0) put_integer(o, (long long)x);
  else {
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, x);
    o.append(buf, (size_t)(r.ptr - buf));
  }
}

template <class T> void enc(std::string &o, const T &v, int depth);

template <class T> std::string enc_text(const T &v, int depth) {
  std::string s;
  enc(s, v, depth);
  return s;
}

// the text of a std::any holding one of the types a test could put in it
using cstr = const char *;
inline void enc_any(std::string &o, const std::any &a, int depth) {
  if (!a.has_value()) { o += "null"; return; }
#define __SQ_ANY(T) if (const T *p = std::any_cast<T>(&a)) { enc(o, *p, depth); return; }
  __SQ_ANY(long) __SQ_ANY(int) __SQ_ANY(long long) __SQ_ANY(unsigned long) __SQ_ANY(unsigned) __SQ_ANY(double)
  __SQ_ANY(float) __SQ_ANY(bool) __SQ_ANY(char) __SQ_ANY(std::string) __SQ_ANY(cstr) __SQ_ANY(std::nullopt_t)
  __SQ_ANY(std::vector<long>) __SQ_ANY(std::vector<std::any>) __SQ_ANY(std::vector<std::string>)
  __SQ_ANY(std::vector<double>) __SQ_ANY(std::vector<float>)
#undef __SQ_ANY
  o += "!any:";
  o += a.type().name();
}

template <class T> void enc(std::string &o, const T &v, int depth) {
  if (depth > 200) { o += "!deep"; return; }
  if constexpr (std::is_same_v<T, bool>) o += v ? "true" : "false";
  else if constexpr (std::is_same_v<T, std::nullopt_t> || std::is_same_v<T, std::nullptr_t> ||
                     std::is_same_v<T, std::monostate>)
    o += "null";
  else if constexpr (is_char<T>::value) put_string(o, &v, 1);
  else if constexpr (std::is_integral_v<T>) put_integer(o, v);
  else if constexpr (std::is_enum_v<T>) put_integer(o, (std::underlying_type_t<T>)v);
  else if constexpr (std::is_floating_point_v<T>) put_double(o, (double)v);
  else if constexpr (is_string<T>::value) put_string(o, v.data(), v.size());
  else if constexpr (std::is_same_v<T, const char *> || std::is_same_v<T, char *>) {
    if (v) put_string(o, v, std::strlen(v));
    else o += "null";
  } else if constexpr (std::is_array_v<T> && is_char<std::remove_cv_t<std::remove_extent_t<T>>>::value) {
    size_t n = 0;
    while (n < std::extent_v<T> && v[n]) n++;
    put_string(o, v, n);
  } else if constexpr (is_optional<T>::value) {
    if (v.has_value()) enc(o, *v, depth + 1);
    else o += "null";
  } else if constexpr (is_variant<T>::value) {
    if (v.valueless_by_exception()) o += "!variant";
    else std::visit([&](const auto &x) { enc(o, x, depth + 1); }, v);
  } else if constexpr (std::is_same_v<T, std::any>) enc_any(o, v, depth + 1);
  else if constexpr (is_pair<T>::value) {
    o += '[';
    enc(o, v.first, depth + 1);
    o += ',';
    enc(o, v.second, depth + 1);
    o += ']';
  } else if constexpr (is_tuple<T>::value) {
    o += '[';
    bool first = true;
    std::apply([&](const auto &...x) { ((o += first ? "" : ",", first = false, enc(o, x, depth + 1)), ...); }, v);
    o += ']';
  } else if constexpr (is_range<T>::value) {
    // maps and sets sorted by their entries' text, sequences in order
    std::vector<std::string> items;
    for (auto it = std::begin(v); it != std::end(v); ++it) {
      if constexpr (has_mapped<T>::value)
        items.push_back(enc_text(it->first, depth + 1) + ":" + enc_text(it->second, depth + 1));
      else if constexpr (std::is_same_v<T, std::vector<bool>>) items.push_back(enc_text((bool)*it, depth + 1));
      else items.push_back(enc_text(*it, depth + 1));
    }
    if constexpr (has_key<T>::value) std::sort(items.begin(), items.end());
    o += has_mapped<T>::value ? '{' : '[';
    for (size_t k = 0; k < items.size(); k++) {
      if (k) o += ',';
      o += items[k];
    }
    o += has_mapped<T>::value ? '}' : ']';
  } else {
    o += '!';
    o += typeid(T).name();
  }
}

// one record, flushed at once: a later exit or crash loses nothing
inline void write_record(const std::string &s) {
  std::fwrite(s.data(), 1, s.size(), stdout);
  std::fflush(stdout);
}

} // namespace __sq

template <class T> void __sq_emit(long i, const T &v) {
  std::string s = "\x1esandq-call ";
  __sq::put_integer(s, i);
  s += ' ';
  __sq::enc(s, v, 0);
  s += '\n';
  __sq::write_record(s);
}
