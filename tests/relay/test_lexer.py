"""The Relay lexer: token kinds and positions, TVM's number and identifier quirks, comments,
and located errors with hints."""
import pytest

from rvmdbg.relay.diagnostics import LexError
from rvmdbg.relay.lexer import tokenize


def kinds(text):
    return [t[0] for t in tokenize(text)[:-1]]


def texts(text):
    return [t[1] for t in tokenize(text)[:-1]]


def number(text):
    toks = tokenize(text)
    assert toks[0][0] == "NUM" and len(toks) == 2, toks
    return toks[0][6]


def lex_error(text, filename="t.relay"):
    with pytest.raises(LexError) as info:
        tokenize(text, filename)
    return info.value


def test_token_kinds_and_values():
    toks = tokenize('def @main(%x: int32, %0) -> Tensor[(1, ?), float32] { nn.dense(%x) }')
    assert [t[0] for t in toks] == [
        "def", "GLOBAL", "(", "LOCAL", ":", "NAME", ",", "GRAPH", ")", "->", "NAME", "[", "(",
        "NUM", ",", "?", ")", ",", "NAME", "]", "{", "NAME", ".", "NAME", "(", "LOCAL", ")", "}",
        "EOF"]
    assert toks[1][6] == "main" and toks[3][6] == "x" and toks[7][6] == 0


def test_positions_are_one_based_with_exclusive_end():
    toks = tokenize("let %x = 1;\n  %long_name")
    let, x = toks[0], toks[1]
    assert let[2:6] == (1, 1, 1, 4)
    assert x[2:6] == (1, 5, 1, 7)
    name = toks[5]
    assert name[1] == "%long_name" and name[2:6] == (2, 3, 2, 13)
    assert toks[-1][0] == "EOF" and toks[-1][2:4] == (2, 13)


def test_keywords_booleans_and_match_question():
    assert kinds("let fn if else match match? ref ref_read ref_write type extern def _") == [
        "let", "fn", "if", "else", "match", "match?", "ref", "ref_read", "ref_write", "type",
        "extern", "def", "_"]
    toks = tokenize("True False")
    assert [(t[0], t[6]) for t in toks[:2]] == [("BOOL", True), ("BOOL", False)]
    assert kinds("match ?") == ["match", "?"]
    assert kinds("_x x_") == ["NAME", "NAME"]


def test_operators_longest_first():
    assert texts("a->b => == != <= >= < > = + - * /") == [
        "a", "->", "b", "=>", "==", "!=", "<=", ">=", "<", ">", "=", "+", "-", "*", "/"]


@pytest.mark.parametrize("text, value, dtype", [
    ("7", 7, "int32"), ("5i64", 5, "int64"), ("5i8", 5, "int8"), ("5i16", 5, "int16"),
    ("5i32", 5, "int32"), ("200u8", 200, "uint8"), ("7u16", 7, "uint16"), ("7u32", 7, "uint32"),
    ("7u64", 7, "uint64"), ("2147483647", 2147483647, "int32"),
    ("2147483648", 2147483648, "int64"), ("-2147483648", -2147483648, "int32"),
    ("-2147483649", -2147483649, "int64"), ("-1", -1, "int32"), ("--1", 1, "int32"),
    ("---1", -1, "int32"), ("1f", 1.0, "float32"), ("2.5f", 2.5, "float32"),
    ("1e-3f", 1e-3, "float32"), ("1E+2f", 100.0, "float32"), ("3f64", 3.0, "float64"),
    ("2f16", 2.0, "float16"), ("2.5f32", 2.5, "float32"), ("-0.5f", -0.5, "float32"),
    ("inff", float("inf"), "float32"), ("-inff", float("-inf"), "float32"),
    ("inff64", float("inf"), "float64"),
])
def test_number_literals(text, value, dtype):
    num = number(text)
    assert num.value == value and num.dtype == dtype
    assert num.is_float == dtype.startswith("float")


def test_nan_literal_and_unsuffixed_float():
    assert number("nanf").value != number("nanf").value
    num = number("1.5")
    assert num.value == 1.5 and num.dtype is None and num.is_float


def test_number_lexing_is_greedy_like_tvm():
    # `%n-1` is `%n` then the literal -1; `5 - 1` with spaces is subtraction
    assert [t[0] for t in tokenize("%n-1")[:-1]] == ["LOCAL", "NUM"]
    assert kinds("%n - 1") == ["LOCAL", "-", "NUM"]
    assert kinds("5 --1") == ["NUM", "NUM"]
    assert kinds("-%x") == ["-", "LOCAL"]
    assert kinds("--%x") == ["-", "-", "LOCAL"]
    # `%t.0.1` lexes the decimal 0.1 after the period
    assert [(t[0], t[1]) for t in tokenize("%t.0.1")[:-1]] == [
        ("LOCAL", "%t"), (".", "."), ("NUM", "0.1")]
    assert kinds("%t.0") == ["LOCAL", ".", "NUM"]


def test_slash_is_part_of_identifiers_after_the_first_character():
    assert texts("%tf/embeddings") == ["%tf/embeddings"]
    assert texts("%x/%y") == ["%x/", "%y"]
    assert texts("%x / %y") == ["%x", "/", "%y"]
    assert texts("nn/x a//b") == ["nn/x", "a//b"]


def test_comments_line_and_nested_block():
    text = "a // one\n/* two /* nested */ still\n comment */ b\n/**/c"
    toks = tokenize(text)
    assert [(t[1], t[2], t[3]) for t in toks[:-1]] == [("a", 1, 1), ("b", 3, 13), ("c", 4, 5)]
    assert texts("x /* // not a line comment */ y") == ["x", "y"]
    assert texts("x // /* not a block comment\ny") == ["x", "y"]


def test_strings_and_attribute_tokens():
    toks = tokenize('#[version = "0.0.5"]\ncast(%x, dtype="int32")')
    assert toks[0][0] == "ATTR" and toks[0][6] == 'version = "0.0.5"'
    s = [t for t in toks if t[0] == "STR"][0]
    assert s[6] == "int32" and s[2:6] == (2, 16, 2, 23)


def test_crlf_line_endings():
    toks = tokenize("a\r\nb\r\n  c")
    assert [(t[1], t[2], t[3]) for t in toks[:-1]] == [("a", 1, 1), ("b", 2, 1), ("c", 3, 3)]


def test_invalid_number_says_where_and_why():
    e = lex_error("let %x = 1-2;")
    assert e.span.line == 1 and e.span.col == 10 and e.span.end_col == 13
    assert "invalid number `1-2`" in e.message
    assert "write `1 - 2` with spaces" in e.hint
    text = e.format()
    assert text.splitlines()[0] == "t.relay:1:10: error: invalid number `1-2`"
    assert text.splitlines()[2] == " " * 16 + "^~~"


def test_double_projection_number_hint():
    e = lex_error("%t.1.0.2")
    assert "(%t.0).1" in e.hint


@pytest.mark.parametrize("text, message", [
    ("300i8", "out of range for int8"),
    ("-1u8", "out of range for uint8"),
    ("99999999999999999999", "out of range for int64"),
    ("5i7", "invalid integer suffix"),
    ("5u", "invalid integer suffix"),
    ("70000f16", "floating point number `70000f16` unrepresentable in width 16"),
    ("-3.5e38f", "floating point number `-3.5e38f` unrepresentable in width 32"),
    ("1e400f64", "invalid floating point number `1e400f64`"),
    ("1.5f8", "invalid float suffix"),
    ("1.5i32", "integer suffix on the float literal"),
    ("1..2", "invalid number"),
])
def test_bad_literals(text, message):
    assert message in lex_error(text).message


@pytest.mark.parametrize("text, value, dtype", [
    ("42i", 42, "int32"), ("-42i", -42, "int32"),  # TVM: a bare `i` suffix is width 32
    ("65504f16", 65504.0, "float16"), ("-65504f16", -65504.0, "float16"),
    ("3.4e38f", 3.4e38, "float32"), ("1e300f64", 1e300, "float64"),
])
def test_suffixes_tvm_accepts(text, value, dtype):
    (tok,) = tokenize(text)[:-1]
    assert tok[6].value == value and tok[6].dtype == dtype


def test_out_of_range_float_is_located():
    e = lex_error("def @main() { 1e39f }")
    assert e.format().splitlines()[0] == (
        "t.relay:1:15: error: floating point number `1e39f` unrepresentable in width 32")
    assert "float32 holds magnitudes up to 3.40282e+38" in e.hint


def test_unterminated_comment_points_at_its_start():
    e = lex_error("x\n  /* a /* b */ c\n")
    assert (e.span.line, e.span.col) == (2, 3)
    assert "unterminated `/*` comment" in e.message


def test_unterminated_string_and_bad_characters():
    assert "unterminated string" in lex_error('cast(%x, dtype="int32)').message
    e = lex_error("a $ b")
    assert e.message == "unexpected character '$'" and e.span.col == 3
    assert "`!=`" in lex_error("a ! b").hint
    assert "after `%`" in lex_error("% x").message
    assert "`#` only starts an attribute" in lex_error("# x").message


def test_metadata_mark_ends_the_program_and_is_refused_mid_line():
    # the loader splits the JSON off first; the lexer only sees the #[metadata] line, last
    assert texts('def @main() { 1 }\n#[metadata]\n') == ["def", "@main", "(", ")", "{", "1", "}"]
    e = lex_error('def @main() { 1 } #[metadata] {"root": 1}')
    assert "#[metadata] must be on a line of its own" in e.message and e.span.col == 19
    assert texts("meta[relay.Constant][0]")[:2] == ["meta", "["]
    assert texts("metadata meta") == ["metadata", "meta"]


def test_errors_carry_their_source():
    e = lex_error("x\ny = 1..2", filename="prog.relay")
    assert e.source is not None and e.source.name == "prog.relay"
    assert e.format().startswith("prog.relay:2:5: error:")


def test_an_integer_literal_of_thousands_of_digits_is_a_located_error():
    # Python's int() refuses 4300+ digits with its own ValueError; the lexer says what is wrong
    text = "9" * 5000
    with pytest.raises(LexError, match="an integer literal of 5000 digits is out of range") as info:
        tokenize(text, "x.relay")
    assert info.value.span.line == 1 and info.value.span.col == 1
    assert tokenize("000000000000000000000000000001")[0][0] != "error"   # leading zeros are fine
