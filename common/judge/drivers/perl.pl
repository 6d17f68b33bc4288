# perl.pl: the record writer for Perl's judge (calls.h), placed after the
# code. Test::Deep's eq_deeply compares plain scalars with eq, so a
# scalar's text follows its string: one that reads as a decimal integer
# bare (3 and "3" are eq), any other as a JSON string (0.5 as "0.5"; true
# is 1, false ""), characters above 0xff as \uXXXX so no byte string
# equals them; undef is null, an array ref [..], a hash ref {K:V,..}
# sorted by K's text, any other ref !TYPE. The call is in list context as
# in eq_deeply: no value is undef, more than one is !list.

sub __sq_text {
    my ($v, $depth) = @_;
    return '!deep' if $depth > 100;
    return 'null' unless defined $v;
    my $r = ref $v;
    if ($r eq '') {
        my $s = "$v";
        return $s if $s =~ /\A-?(?:0|[1-9][0-9]*)\z/;
        $s =~ s/([\\"])/\\$1/g;
        $s =~ s/([\x00-\x1f])/sprintf('\\u%04x', ord $1)/ge;
        $s =~ s/([^\x00-\xff])/__sq_u(ord $1)/ge;
        utf8::downgrade($s);
        return '"' . $s . '"';
    }
    if ($r eq 'ARRAY') {
        return '[' . join(',', map { __sq_text($_, $depth + 1) } @$v) . ']';
    }
    if ($r eq 'HASH') {
        my %text = map { (__sq_text($_, $depth + 1), $_) } keys %$v;
        return '{' . join(',', map { $_ . ':' . __sq_text($v->{$text{$_}}, $depth + 1) } sort keys %text) . '}';
    }
    return '!' . $r;
}

# A character above 0xff as \uXXXX, a UTF-16 pair beyond the BMP.
sub __sq_u {
    my ($o) = @_;
    return sprintf('\\u%04x', $o) if $o < 0x10000;
    $o -= 0x10000;
    return sprintf('\\u%04x\\u%04x', 0xd800 + ($o >> 10), 0xdc00 + ($o & 0x3ff));
}

# __sq_emit(I, VALUE...) writes result I, the value's text, as one record
# on a raw duplicate of the standard output, unbuffered. True, for the
# template's if.
sub __sq_emit {
    my $i = shift;
    my $t = @_ == 1 ? __sq_text($_[0], 0) : @_ == 0 ? 'null' : '!list';
    my $rec = "\x1esandq-call " . int($i) . " $t\n";
    utf8::downgrade($rec);
    if (open(my $out, '>&', \*STDOUT)) {
        binmode $out;
        syswrite($out, $rec);
        close $out;
    }
    return 1;
}
