"""The numbers a reader reads in a post's prose, each with its value, its unit and where it stands.

Everything on the page is read: text, tables, console and untagged fences, math, alt and
title attributes, captions. What is not read is code (fenced with a language, or inline
code other than a bare number), link targets, URLs, citations, HTML tags themselves and
comments, where the binding markers live (tools/numbers/bindings.py).

It is read as the page shows it (`reading`): comments take no room (`99<!---->.9` is 99.9), HTML
character references are decoded (`&#57;7` is 97, `&percnt;` is %), every character is
normalised as NFKC and every decimal digit of any script is its ASCII digit (`９７`, `٩٧`),
invisible format characters are dropped, and emphasis around a number (`_97_`, `**97**`) is not
part of it. A thin or no-break space before a unit keeps the unit attached.

A number is *result-like* unless its form alone says it is not a result: a name's part
(`d_k`, `v2`, 3rd, 2D, the 7s), a version (PyTorch 2.13.0, Python 3.11), a date or year ("in 2017",
the 1990s, NeurIPS 2017, 2017–2019, 2026-07-02), a place in the text, the model or the training
(Figure 2, §3.2, part 3 of 4, digit 1, epoch 9), a size or a compound (28×84, 7 by 7, 3-digit), a
digit named as a symbol ("a 7 with a bar"; not "only the 3 canvases it misreads"), or a whole
number in math that is small or the base of a symbolic power (the 1 of 1 − ε, the 10000 of
10000^{2i/d}). Number words ("seven") are result-like where they count an outcome ("misreads
seven", "seven of 100", "nine in ten", "two thirds of", "seven canvases are misread", "seven
percent"). Everything else a reader could take for a measured value — integers, decimals (.99
too), negative numbers (−0.3, –0.3), percentages, ratios, times, scientific notation, the ends of
a range or a fraction — must be bound to the run or marked.
"""
import html
import re
import unicodedata
from dataclasses import dataclass
from decimal import Context, Decimal, InvalidOperation, localcontext

SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
NUMBER = re.compile(  # a sign (hyphen, minus or en dash), digits or none before a fraction (.99)
    r"(?<![\w.,\\^])(?P<sign>[-\u2212\u2013])?(?=\.?\d)(?P<digits>\d{1,3}(?:,\d{3})+(?!\d)|\d+)?"
    r"(?P<fraction>\.\d+)?"
    r"(?:[eE](?P<exponent>[-+]?\d+)|[ \u00a0\u202f]?(?:×|\\times|x|\\cdot|·)[ \u00a0\u202f]?10"
    r"(?:\^\{?(?P<texponent>[-\u2212+]?\d+)\}?|(?P<superscript>[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)))?")
SCALES = {"thousand": 3, "million": 6, "billion": 9}
# A unit after a number, longest first; each maps to the kind a bound record must share.
UNITS = {"percentage points": "pp", "percentage point": "pp", "per cent": "%", "percent": "%", "%": "%",
         "pp": "pp", "times": "x", "×": "x", "x": "x", "fold": "x",
         "milliseconds": "ms", "ms": "ms", "seconds": "s", "second": "s", "secs": "s", "sec": "s", "s": "s",
         "minutes": "min", "minute": "min", "mins": "min", "min": "min", "hours": "h", "hour": "h", "h": "h"}
UNIT = re.compile(r"(?:[ \u00a0\u202f]{1,3}|-)?(?:(?P<scale>thousand|million|billion)\b[ \u00a0]?)?"
                  r"(?P<unit>" + "|".join(re.escape(unit) for unit in sorted(UNITS, key=len, reverse=True)) +
                  r")(?![A-Za-z0-9])|(?:[ \u00a0\u202f])(?P<scale_only>thousand|million|billion)\b")
NUMBER_WORDS = {word: value for value, word in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
NUMBER_WORDS.update({"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
                     "ninety": 90, "hundred": 100, "thousand": 1000, "dozen": 12})
WORD_NUMBER = re.compile(r"\b(" + "|".join(NUMBER_WORDS) + r")\b", re.IGNORECASE)
# Words that make a number word a count of outcomes.
OUTCOME_BEFORE = re.compile(r"\b(?:misreads?|misread|miss(?:es)?|gets?|got|scores?|fails?|failed|errs?|only|"
                            r"just|all but)[ \u00a0]+(?:\w+[ \u00a0]+)?$", re.IGNORECASE)
OUTCOME_AFTER = re.compile(r"^[ \u00a0]+(?:[\w-]+[ \u00a0]+)?(?:percent|per cent|%|out of|in (?:a|every|each|\d|(?:"
                           + "|".join(NUMBER_WORDS) + r")\b)|of (?:a |the |every "
                           r"|each )?(?:\d|hundred|thousand)|times|mistakes?|errors?|misreads?|wrong|right)"
                           r"|^[ \u00a0-](?:thirds|quarters|fifths|sixths|sevenths|eighths|ninths|tenths|"
                           r"hundredths|thousandths)[ \u00a0]+of\b", re.IGNORECASE)
# A word that, a few words after a digit in the same clause, makes it a count of outcomes ("the 3
# canvases it gets wrong"); after a number word, only as what it is said to be ("seven canvases are misread").
OUTCOME_WORD = re.compile(r"\b(?:mis-?read\w*|wrong\w*|incorrect\w*|correct(?:ly)?|mistakes?|errors?|erred|"
                          r"fail(?:s|ed|ures?)?|miss(?:es|ed)?|(?:read|reads|get|gets|got)[ \u00a0]+(?:\w+[ \u00a0]+)?"
                          r"right)\b", re.IGNORECASE)
CLAUSE_WORDS = 6
OUTCOME_PASSIVE = re.compile(r"^[ \u00a0]+(?:[\w'-]+[ \u00a0]+){0,3}?(?:are|were|is|was|get|gets|got|go|went|end up)"
                             r"[ \u00a0]+(?:\w+[ \u00a0]+)?(?:mis-?read|wrong|missed|failed|incorrect|read (?:wrong|right|"
                             r"correctly|incorrectly)|right|correct)\b", re.IGNORECASE)
SELECTION = re.compile(r"\b(?:first|last|next|top|previous|following)[ \u00a0]+$", re.IGNORECASE)
# Words after which a number names a place (Figure 2, digit 1), a release (PyTorch 2.0) or a part.
PLACE_WORDS = {
    "figure", "figures", "fig", "table", "tables", "section", "sections", "sec", "§", "chapter", "part", "parts",
    "post", "posts", "lesson", "step", "steps", "equation", "eq", "appendix", "question", "questions", "exercise",
    "row", "rows", "column", "columns", "line", "lines", "cell", "cells", "page", "pages", "digit", "digits",
    "position", "positions", "layer", "block", "head", "item", "level", "version", "release", "v", "python",
    "pytorch", "torch", "tensorflow", "numpy", "matplotlib", "quarto", "cuda", "cudnn", "jupyter", "jupyterlab",
    "ipython", "node", "nbformat", "nbclient", "ipykernel", "onnx", "opset", "onnxruntime", "chrome", "chromium",
    "firefox", "safari", "ubuntu", "debian", "macos", "ios", "android", "pandoc", "es", "html", "css", "mnist",
    "number", "numbers", "token", "tokens", "canvas", "example", "seed", "epoch", "epochs",
}
YEAR_BEFORE = re.compile(r"(?:\b(?:in|since|from|until|till|before|after|by|of|the|circa|c\.|early|late|mid|"
                         r"january|february|march|april|may|june|july|august|september|october|november|"
                         r"december)|[(©,–-])\s*$", re.IGNORECASE)
CODE_FENCES = {"python", "py", "python3", "ipython", "bash", "sh", "shell", "zsh", "yaml", "yml", "json", "toml",
               "make", "makefile", "javascript", "js", "typescript", "ts", "css", "scss", "html", "r", "julia",
               "sql", "c", "cpp", "rust", "go", "java", "diff", "ini", "dockerfile"}
BARE_NUMBER_CODE = re.compile(r"\s*[-\u2212]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?\s*(?:%|x|×)?\s*")
ENTITY = re.compile(r"&(?:#[0-9]{1,8}|#[xX][0-9a-fA-F]{1,7}|[A-Za-z][A-Za-z0-9]{1,31});")
COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)  # for short texts; comment_spans() for any text
# Inline HTML that styles text without breaking it (9<b>7</b> shows 97); only its readable attributes show.
INLINE_TAG = re.compile(r"</?(?:span|b|i|em|strong|small|big|mark|u|s|strike|del|ins|abbr|a|font|wbr|q|cite|dfn|"
                        r"kbd|var|time|data|bdi|bdo)\b[^<>]*>", re.IGNORECASE)
ENTITY_OR_TAG = re.compile(ENTITY.pattern + "|" + INLINE_TAG.pattern, re.IGNORECASE)
READABLE_ATTRIBUTE = re.compile(r'\b(?:alt|title|aria-label)\s*=\s*(?:"([^"]*)"|\'([^\']*)\')', re.IGNORECASE)
EXPONENT_SIGNS = set("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺")  # NUMBER reads them as an exponent: kept as written
READ_AS = {"\u066a": "%", "\u066b": ".", "\u066c": ","}  # Arabic percent sign, decimal and thousands separators
# What the page does not show around a number: emphasis delimiters touching it (_97.2_, **97**) and the
# backslash of a markdown escape (97\.2, 97\%).
NOT_SHOWN = re.compile(r"(?<![\w*\\])[*_]{1,3}(?=[-\u2212\u2013]?\.?\d)|(?<=\d)[*_]{1,3}(?![\w*])|"
                       r"(?<![\\])\\(?=[.%*_-])|"
                       # a pandoc span's brackets and plain attributes: 9[7]{.mark} shows 97
                       r"\[(?=[^\[\]\n]*\]\{[^{}\n]*\})|"
                       r"\]\{(?![^{}\n]*(?:alt|title|aria-label|fig-|tbl-|lst-)[\w-]*=)[^{}\n]*\}")
# A decimal context wide enough for any exponent a text can write (1e999999999): no overflow.
WIDE = Context(prec=60, Emax=10 ** 15, Emin=-10 ** 15)


@dataclass
class Number:
    """One number as the prose writes it."""
    start: int          # where the numeral starts in the text (its sign included)
    end: int            # where the numeral ends
    unit_end: int       # where its unit ends ("87.9 %": after the %)
    numeral: str        # "87.9", "2,000", "-0.25", "1.2e-05", "seven"
    value: Decimal      # the value written, scale included: "0.53 million" is 530000
    places: int         # decimal places written: the precision a rounded binding keeps
    scale: int          # the power of ten of a scale word ("million": 6)
    unit: str           # "", "%", "pp", "x", "ms", "s", "min", "h"
    result_like: bool
    in_math: bool
    math_end: int       # where the math holding it ends (a marker goes after it)
    word: bool = False  # written as a word ("seven")
    read: str = ""      # the number and its unit as the reader reads them: "97.2 %" for "&#57;7.2&thinsp;%"


def decimal_of(numeral):
    """The Decimal a numeral writes: "2,000" → 2000, "−0.25" → -0.25, "1.2 × 10⁻⁵" → 1.2E-6… exact."""
    match = NUMBER.fullmatch(numeral.strip())
    if not match:
        return None
    return number_value(match)


def number_value(match):
    sign = "-" if match.group("sign") else ""
    mantissa = sign + (match.group("digits") or "0").replace(",", "") + (match.group("fraction") or "")
    exponent = match.group("exponent") or match.group("texponent") or (
        match.group("superscript").translate(SUPERSCRIPTS) if match.group("superscript") else None)
    try:
        return Decimal(mantissa + (f"e{exponent.replace(chr(0x2212), '-')}" if exponent else ""))
    except (InvalidOperation, ValueError):
        return None


def unit_of(text):
    """The unit kind a recorded text carries after its number ("87.9%" → "%", "2.9x" → "x")."""
    match = NUMBER.search(text)
    if not match:
        return ""
    after = UNIT.match(text, match.end())
    return UNITS[after.group("unit")] if after and after.group("unit") else ""


# ---- what is read ------------------------------------------------------------------------------

@dataclass
class Reading:
    """A text as the page shows it, and where each of its characters stands in the text as written."""
    text: str
    starts: list   # starts[i]: where the i-th character read starts in the written text
    ends: list     # ends[i]: where it ends
    length: int    # the written text's length

    def start(self, position):
        return self.starts[position] if position < len(self.starts) else self.length

    def end(self, position):
        return self.ends[position - 1] if position > 0 else 0


def comment_spans(text, opening="<!--", closing="-->"):
    """[(start, end)] of every closed HTML comment (or other opening…closing span), in one pass: a regex
    such as <!--.*?--> would scan to the end again from each unclosed one."""
    spans, position = [], 0
    while True:
        start = text.find(opening, position)
        end = text.find(closing, start + len(opening)) if start != -1 else -1
        if end == -1:
            return spans
        spans.append((start, end + len(closing)))
        position = end + len(closing)


def without_comments(text):
    kept, position = [], 0
    for start, end in comment_spans(text):
        kept.append(text[position:start])
        position = end
    return "".join(kept) + text[position:]


def read_char(char):
    """One character as a reader takes it: any script's decimal digit as its ASCII digit, NFKC (a full-width
    ％, a thin or no-break space), invisible format characters (zero-width space, soft hyphen) as nothing."""
    if char in EXPONENT_SIGNS or char.isascii():
        return char
    digit = unicodedata.decimal(char, None)
    if digit is not None:
        return str(digit)
    category = unicodedata.category(char)
    if category == "Cf":
        return ""
    if category == "No":  # ①, ½, ₂: not digits a reader takes for a plain number
        return char
    normal = READ_AS.get(char) or unicodedata.normalize("NFKC", char)
    return normal if len(normal) == 1 else char


def reading(text):
    """The Reading of `text`: comments take no room, character references decoded, characters normalised
    (read_char), and the emphasis or escapes around a number dropped (NOT_SHOWN)."""
    chars, starts, ends = [], [], []

    def put(read, start, end):
        for char in read:
            chars.append(char)
            starts.append(start)
            ends.append(end)

    def put_written(start, end):
        for index in range(start, end):
            put(read_char(text[index]), index, index + 1)

    position = 0
    for comment_start, comment_end in [*comment_spans(text), (len(text), len(text))]:
        for match in ENTITY_OR_TAG.finditer(text, position, comment_start):
            put_written(position, match.start())
            position = match.end()
            if match.group().startswith("<"):
                shown = " ".join(value for pair in READABLE_ATTRIBUTE.findall(match.group()) for value in pair
                                 if value)
                put("".join(read_char(char) for char in f" {shown} ") if shown else "", match.start(), match.end())
                continue
            decoded = html.unescape(match.group())
            if decoded == match.group():  # not a reference HTML knows: read as written
                put_written(match.start(), match.end())
            else:
                put("".join(read_char(char) for char in decoded), match.start(), match.end())
        put_written(position, comment_start)
        position = comment_end
    shown = "".join(chars)
    dropped = {index for match in NOT_SHOWN.finditer(shown) for index in range(*match.span())}
    if dropped:
        kept = [index for index in range(len(chars)) if index not in dropped]
        shown = "".join(chars[index] for index in kept)
        starts, ends = [starts[index] for index in kept], [ends[index] for index in kept]
    return Reading(shown, starts, ends, len(text))


def masked(text):
    """`text` with what a reader does not read as prose blanked to spaces, same length, same places;
    and the spans of math in it."""
    chars = list(text)

    def blank(start, end):
        chars[start:end] = [" " if char != "\n" else "\n" for char in text[start:end]]

    def keep_attribute_values(start, end):
        """Blank a tag or attribute block but keep the values a reader sees (alt, title, captions)."""
        inside = text[start:end]
        blank(start, end)
        for value in re.finditer(r'(?:alt|title|aria-label|fig-cap|fig-alt|fig-subcap|tbl-cap|lst-cap)="([^"]*)"',
                                 inside):
            chars[start + value.start(1):start + value.end(1)] = list(value.group(1))

    for comment in comment_spans(text):
        blank(*comment)
    for fence in re.finditer(r"^([ \t]*)(```+|~~~+)[ \t]*\{?\.?([^\s`}]*)[^\n]*\n(.*?)^\1\2[ \t]*$", text,
                             re.DOTALL | re.MULTILINE):
        language = fence.group(3).lower()  # "=html" is raw HTML: page text, its tags blanked below
        blank(fence.start(), fence.start(4))  # the fence line itself
        blank(fence.end(4), fence.end())
        if language in CODE_FENCES:
            blank(fence.start(4), fence.end(4))
    current = "".join(chars)
    for code in re.finditer(r"(`+)(.+?)\1", current, re.DOTALL):
        if not BARE_NUMBER_CODE.fullmatch(code.group(2)):
            blank(*code.span())
        else:
            blank(code.start(), code.start(2))
            blank(code.end(2), code.end())
    current = "".join(chars)
    link = r"\]\([^)\s\[\]]*(?:\s+(?:\"(?P<double>[^\"]*)\"|'(?P<single>[^']*)'))?\s*\)"
    definition = r"^[ \t]{0,3}\[(?!\^)[^\]\n]+\]:[ \t]*\S+(?:[ \t]+(?:\"(?P<double>[^\"\n]*)\"|'(?P<single>[^'\n]*)'))?[ \t]*$"
    for pattern in (link, definition):  # the target is not read; a title is (a tooltip shows it)
        for match in re.finditer(pattern, current, re.MULTILINE):
            blank(*match.span())
            title = "double" if match.group("double") is not None else "single"
            if match.group(title) is not None:
                chars[match.start(title):match.end(title)] = list(match.group(title))
    current = "".join(chars)
    for shortcode in comment_spans(current, "{{<", ">}}"):
        blank(*shortcode)
    patterns = [r"\]\[[^\]]*\]", r"<https?://[^>]*>",
                r"https?://\S+", r"\[@[^\]]*\]", r"(?<![\w.])@[\w:.-]+", r"\[\^[^\]]*\]", r"^[ \t]*\[\^[^\]]*\]:",
                r"^[ \t]*\d+[.)](?=[ \t])", r"^#{1,6}[ \t]+\d+(?:\.\d+)*\.?(?=\s)",
                r"^(?=[ \t:|-]*---)[ \t:|-]+$"]  # a table's rule or a line: one line, no nested repeats
    for pattern in patterns:
        for match in re.finditer(pattern, current, re.MULTILINE | re.DOTALL):
            blank(*match.span())
    current = "".join(chars)
    for tag in re.finditer(r"</?[A-Za-z][^>]*>|\{[#.][^}\n]*\}|\{[a-z-]+=[^}\n]*\}", current):
        keep_attribute_values(*tag.span())
    current = "".join(chars)
    math = [(match.start(), match.end()) for match in
            re.finditer(r"\$\$.*?\$\$|(?<![\\$\w])\$(?=\S)[^$\n]+?(?<=\S)\$(?!\d)", current, re.DOTALL)]
    for start, end in math:  # LaTeX's \% and \, read as % and a space
        for escape in re.finditer(r"\\([%,;! ])", current[start:end]):
            chars[start + escape.start()] = " "
            if escape.group(1) != "%":
                chars[start + escape.start(1)] = " "
    return "".join(chars), math


# ---- which numbers are results -------------------------------------------------------------------

def numbers_in(text):
    """Every number a reader reads in `text` (markdown), in order; their places are in `text` as written."""
    read = reading(text)
    shown, math = masked(read.text)
    found = []
    with localcontext(WIDE):
        for match in NUMBER.finditer(shown):
            number = from_match(shown, match, math)
            if number:
                found.append(number)
        for match in WORD_NUMBER.finditer(shown):
            found.append(from_word(shown, match, math))
    for number in found:  # from the places read to the places written
        number.read = " ".join(shown[number.start:number.unit_end].split())
        number.start, number.end, number.unit_end, number.math_end = (
            read.start(number.start), read.end(number.end), read.end(number.unit_end), read.end(number.math_end))
    return sorted(found, key=lambda number: number.start)


def math_around(math, position):
    return next(((start, end) for start, end in math if start <= position < end), None)


def from_match(shown, match, math):
    value = number_value(match)
    if value is None:
        return None
    start, end = match.span()
    after = UNIT.match(shown, end)
    scale_word = after and (after.group("scale") or after.group("scale_only"))
    unit = UNITS[after.group("unit")] if after and after.group("unit") else ""
    if unit == "x" and re.match(r"[ \u00a0]?(?:×|x)[ \u00a0]?\d", shown[end:]):
        unit = ""  # 28×84: a size, not a ratio
    if unit == "s" and re.match(r"s(?![A-Za-z0-9])", shown[end:end + 2]) and re.fullmatch(r"\d", match.group()):
        unit, after = "", None  # the 7s: sevens, not seven seconds
    scale = SCALES[scale_word] if scale_word else 0
    unit_end = after.end() if after else end
    span = math_around(math, start)
    fraction = match.group("fraction") or ""
    number = Number(start, end, unit_end, shown[start:end], value.scaleb(scale), len(fraction) - 1 if fraction else 0,
                    scale, unit, True, bool(span), span[1] if span else end)
    number.result_like = not exempt(shown, number, match)
    return number


def counts_outcome(shown, start, end, clause=False):
    """Do the words around a number make it a count of outcomes: "misreads seven", "seven in ten",
    "seven canvases are misread"? With `clause`, an outcome word in the next few words of its clause
    is enough ("the 3 canvases it misreads")."""
    if not clause and SELECTION.search(shown[max(0, start - 12):start]):
        return False  # the first six, the next one: which are shown, not how many
    if OUTCOME_BEFORE.search(shown[max(0, start - 40):start]) or OUTCOME_AFTER.match(shown[end:end + 40]) \
            or OUTCOME_PASSIVE.match(shown[end:end + 80]):
        return True
    if not clause:
        return False
    words = re.split(r"[.;:!?()\[\]|\n]", shown[end:end + 120], maxsplit=1)[0]
    return bool(OUTCOME_WORD.search(" ".join(words.split()[:CLAUSE_WORDS])))


def from_word(shown, match, math):
    start, end = match.span()
    word = match.group(1).lower()
    span = math_around(math, start)
    after = UNIT.match(shown, end)
    unit = UNITS[after.group("unit")] if after and after.group("unit") and after.group("unit") in (
        "percent", "per cent", "times", "percentage points", "percentage point") else ""
    outcome = (counts_outcome(shown, start, end) and not re.match(r"-[A-Za-z]", shown[end:end + 2])) or bool(unit)
    if re.search(r"\b(?:in|out of)[ \u00a0]+(?:a[ \u00a0]+|every[ \u00a0]+)?$", shown[max(0, start - 20):start]):
        outcome = bool(unit)  # the ten of "nine in ten": what the count is out of
    if word == "one" and re.match(r"\W+(?:of|another|by|at a time)\b", shown[end:end + 12]) and not unit:
        outcome = outcome and bool(OUTCOME_BEFORE.search(shown[max(0, start - 40):start]))
    return Number(start, end, after.end() if unit else end, match.group(1), Decimal(NUMBER_WORDS[word]), 0, 0, unit,
                  outcome, bool(span), span[1] if span else end, word=True)


def exempt(shown, number, match):
    """Does the number's form alone say it is not a result?"""
    start, end = number.start, number.end
    before, after = shown[max(0, start - 60):start], shown[end:end + 30]
    digits = match.group("digits") or ""
    whole = bool(digits) and not match.group("fraction") and not match.group("sign") and not (
        match.group("exponent") or match.group("texponent") or match.group("superscript"))
    if re.fullmatch(r"1[89]\d0|20\d0", digits) and after.startswith("s"):
        return True  # the 1990s
    if re.match(r"[A-Za-z]", after) and (not UNIT.match(shown, end) or not number.unit and after[:1] == "s"):
        return True  # part of a name or an ordinal: 3rd, 2D, 1990s, 10th, the 7s
    if re.match(r"\.\d", after) or re.search(r"\d\.$", before) or re.match(r"-\d{2}-\d{2}", after):
        return True  # 2.13.0, a date 2026-06-18
    if whole and len(digits) == 2 and re.search(r"\b\d{4}-(?:\d{2}-)?$", before):
        return True  # the month and day of a date: 2026-07-02
    if whole and not number.unit and len(digits) <= 3 and re.match(r"-[A-Za-z]", after) \
            and not OUTCOME_BEFORE.search(before):
        return True  # a compound: 3-digit, 12-token
    listed = re.sub(r"(?:\d+(?:\.\d+)*[ \u00a0]*(?:,|and|or|to|–|-)[ \u00a0]*)+$", "", before)  # "digits 1 and 2"
    previous_word = re.search(r"([A-Za-z§][\w-]*)[.,:]?[ \u00a0]*$", listed)
    if previous_word and previous_word.group(1).lower() in PLACE_WORDS and not number.unit:
        return True
    if before.endswith("§") or re.search(r"==\s*$", before):
        return True
    if re.search(r"\b(?:part|post|lesson|chapter|step|question)s?[ \u00a0]+\d+[ \u00a0]+of[ \u00a0]+$", before,
                 re.IGNORECASE):
        return True  # the 4 of "part 3 of 4"
    if number.unit in ("", "x") and not match.group("fraction") and (
            re.match(r"[ \u00a0\u202f]?(?:×|x|by)[ \u00a0\u202f]?\d", after) or
            re.search(r"\d[ \u00a0\u202f]?(?:×|x|by)[ \u00a0\u202f]?$", before)):
        return True  # a size: 28×84, 7 by 7
    if re.search(r"[A-Za-z]-$", before):
        return True  # a name's part: SHA-256, GPT-2
    article = re.search(r"\b(?:a|an|the)\s+(?:[a-z]+\s+)?$", before, re.IGNORECASE)
    if len(digits) == 1 and whole and not number.unit and article \
            and not re.match(r"[ \u00a0]+(?:of|out|in[ \u00a0]+(?!the\b|this\b|that\b|its\b|their\b))\b", after) \
            and not counts_outcome(shown, start - len(before) + article.start(), end, clause=True):
        return True  # a digit as a symbol: "a 1 with a flag", "the 7"; not "only the 3 canvases it misreads"
    if whole and len(digits) == 4 and 1900 <= int(digits) <= 2099 and not number.unit and (
            YEAR_BEFORE.search(before) or re.search(r"(?:\b[A-Za-z]*[A-Z][A-Za-z]*[A-Z][A-Za-z]*|\bet al\.?,?)[ \u00a0]*$",
                                                    before)
            or re.match(r"[–-](?:19|20)\d\d\b", after)):
        return True  # in 2017, NeurIPS 2017, Vaswani et al. 2017, 2017–2019
    if number.in_math and not number.unit and whole and len(digits) <= 2:
        return True  # a formula's constant: the 1 of 1 − ε, the 2 of √2
    if number.in_math and not number.unit and whole and re.match(r"\^(?:\{[^{}]*[A-Za-z][^{}]*\}|[A-Za-z])", after):
        return True  # the base of a symbolic power: 10000^{2i/d}
    return False
