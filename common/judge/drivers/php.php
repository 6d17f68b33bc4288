// php.php: the record writer for PHP's judge (calls.h), placed after the
// code, in PHP mode (no opening tag of its own), perhaps in the code's
// namespace: every built-in is called by its global name. MultiPL-E's
// test is !==, so the text keeps what it tells apart: an int in decimal, a
// float with its point (3.0, not 3: 3.0 !== 3) in its shortest round trip
// (-0.0 === 0.0, so 0.0), arrays in their order (a list [..], any other
// {K:V,..}), strings as JSON of their bytes, null, true, false, an object
// as !ClassName. NaN (never identical in PHP) is NaN.

function __sq_text($v, $depth = 0) {
    if ($depth > 100) return '!deep';
    if ($v === null) return 'null';
    if ($v === true) return 'true';
    if ($v === false) return 'false';
    if (\is_int($v)) return (string)$v;
    if (\is_float($v)) {
        if (\is_nan($v)) return 'NaN';
        if (\is_infinite($v)) return $v > 0 ? 'Infinity' : '-Infinity';
        if ($v == 0.0) return '0.0';
        \ini_set('serialize_precision', '-1');
        return \var_export($v, true);
    }
    if (\is_string($v)) {
        $out = '"';
        $n = \strlen($v);
        for ($k = 0; $k < $n; $k++) {
            $c = $v[$k];
            $o = \ord($c);
            if ($c === '"' || $c === '\\') $out .= '\\' . $c;
            elseif ($o < 0x20) $out .= \sprintf('\\u%04x', $o);
            else $out .= $c;
        }
        return $out . '"';
    }
    if (\is_array($v)) {
        $parts = [];
        if (\array_is_list($v)) {
            foreach ($v as $x) $parts[] = __sq_text($x, $depth + 1);
            return '[' . \implode(',', $parts) . ']';
        }
        foreach ($v as $k => $x) $parts[] = __sq_text($k, $depth + 1) . ':' . __sq_text($x, $depth + 1);
        return '{' . \implode(',', $parts) . '}';
    }
    if (\is_object($v)) return '!' . \get_class($v);
    return '!' . \gettype($v);
}

// __sq_emit($i, $v) writes result $i, $v's text, as one record on the
// standard output (past any output buffer), flushed.
function __sq_emit($i, $v) {
    $out = \fopen('php://stdout', 'w');
    \fwrite($out, "\x1esandq-call " . (int)$i . ' ' . __sq_text($v) . "\n");
    \fclose($out);
}
