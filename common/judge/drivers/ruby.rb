# ruby.rb: the record writer for Ruby's judge (calls.h), placed before the
# code. assert_equal compares with ==, so: integers and integral floats
# below 2**53 in decimal (1 == 1.0), other floats as Float#to_s (shortest
# round trip), strings as JSON of their bytes, arrays as [..], hashes as
# {K:V,..} sorted by K's text, sets as sorted [..], nil as null, anything
# else as !ClassName.
module SqCalls__
  def self.string(s)
    out = +'"'
    s.to_s.b.each_byte do |c|
      if c == 0x22 || c == 0x5c
        out << '\\' << c.chr
      elsif c < 0x20
        out << format('\\u%04x', c)
      else
        out << c.chr
      end
    end
    (out << '"').b
  end

  def self.float(x)
    return 'NaN' if x.nan?
    return(x > 0 ? 'Infinity' : '-Infinity') if x.infinite?
    return x.to_i.to_s if x == x.floor && x.abs < 2**53
    x.to_s
  end

  def self.text(v, depth = 0)
    return '!deep' if depth > 100
    case v
    when nil then 'null'
    when true then 'true'
    when false then 'false'
    when Integer then v.to_s
    when Float then float(v)
    when String then string(v)
    when Array then ('[' + v.map { |x| text(x, depth + 1) }.join(',') + ']').b
    when Hash
      pairs = v.map { |k, x| [text(k, depth + 1), text(x, depth + 1)] }
      ('{' + pairs.sort.map { |k, x| k + ':' + x }.join(',') + '}').b
    else
      if defined?(::Set) && v.is_a?(::Set)
        ('[' + v.map { |x| text(x, depth + 1) }.sort.join(',') + ']').b
      else
        '!' + v.class.name.to_s
      end
    end
  end
end

# __sq_emit(i, v) writes result i, v's text, as one record, flushed.
def __sq_emit(i, v)
  STDOUT.write(("\x1esandq-call #{i.to_i} ".b + SqCalls__.text(v)).b + "\n")
  STDOUT.flush
end
