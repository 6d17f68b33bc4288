// go.go: the record writer for Go's judge (calls.h), placed after the
// candidate's code (or the reference's head). MultiPL-E compares
// fmt.Sprintf("%v") of both sides, so a value's text is that string, as a
// JSON string (bytes as they are, `"`, `\` and those below 0x20 escaped).
// It can use no import but the prompt's "fmt" and "testing".

// __sq_emit writes result i, v's text, as one record in one write.
func __sq_emit(i int, v interface{}) {
	const hex = "0123456789abcdef"
	s := fmt.Sprintf("%v", v)
	b := make([]byte, 0, len(s)+32)
	b = append(b, "\x1esandq-call "...)
	b = append(b, fmt.Sprint(i)...)
	b = append(b, ' ', '"')
	for k := 0; k < len(s); k++ {
		c := s[k]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		default:
			b = append(b, c)
		}
	}
	b = append(b, '"', '\n')
	fmt.Print(string(b))
}

// the prompt imports "testing" for its test function, which main replaces
var _ = testing.Verbose
