"""Computed items: each generator draws parameters and computes the ground truth and the typical slips.

Arithmetic, units, dates, Python expressions and everyday reasoning; no answer is typed in by hand.
"""

from __future__ import annotations

import calendar
import datetime as dt
import random
from collections.abc import Callable, Sequence
from decimal import ROUND_HALF_UP, Decimal

from fcb_datasets.embedded.questions import Question, make_question, question_problems


def _num(value: Decimal | int) -> str:
    """Plain decimal text: no exponent, no trailing zeros (Decimal('1E+2') -> '100')."""
    return format(Decimal(value).normalize(), "f")


def _q1(value: Decimal) -> str:
    """Round half-up to one decimal place, keeping the '.0'."""
    return str(value.quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))


def _gen_price(rng: random.Random) -> Question:
    plural = rng.choice(("pencils", "stamps", "bolts", "erasers", "postcards", "batteries"))
    price, qty = rng.randint(23, 89), rng.randint(12, 48)
    total, slip, short = price * qty, price * qty + rng.choice((-10, 10)), price * (qty - 1)
    return make_question(
        "arithmetic",
        f"A shop sells {plural} at {price} cents each. How many cents do {qty} {plural} cost?",
        f"{qty} {plural} cost {{}} cents",
        [
            (str(total), f"{price} x {qty} = {total}"),
            (str(slip), f"{price} x {qty} = {slip}"),
            (str(short), f"{price} x {qty - 1} = {short}"),
        ],
        numeric=True,
        tags=("multiplication",),
    )


def _gen_precedence(rng: random.Random) -> Question:
    a, b, c = rng.randint(2, 9), rng.randint(2, 9), rng.randint(2, 9)
    truth, left, swapped = a + b * c, (a + b) * c, a * b + c
    return make_question(
        "arithmetic",
        f"What is {a} + {b} x {c}? (Here x means multiplication.)",
        f"{a} + {b} x {c} = {{}}",
        [
            (str(truth), f"multiplication comes before addition and {b} x {c} is added to {a}"),
            (str(left), f"the sum {a} + {b} = {a + b} comes first and is then multiplied by {c}"),
            (str(swapped), ""),
        ],
        numeric=True,
        evidence=("By the standard order of operations, multiplication is carried out before addition.",),
        tags=("operator_precedence",),
    )


def _gen_percent_of(rng: random.Random) -> Question:
    pct, base = rng.choice((12, 15, 18, 24, 35, 45, 55, 65, 75)), rng.randrange(40, 420, 20)
    part = Decimal(pct * base) / 100
    return make_question(
        "arithmetic",
        f"What is {pct}% of {base}?",
        f"{pct}% of {base} is {{}}",
        [
            (_num(part), f"{base} x {pct} / 100 = {_num(part)}"),
            (_num(part / 10), f"{base} x {pct} / 1000 = {_num(part / 10)}"),
            (_num(base - part), f"taking {pct}% away from {base} leaves {_num(base - part)}"),
        ],
        numeric=True,
        tags=("percentages",),
    )


def _gen_percent_change(rng: random.Random) -> Question:
    pct = rng.choice((10, 20, 30, 40, 50))
    up, down = 1 + Decimal(pct) / 100, 1 - Decimal(pct) / 100
    change = _num((up * down - 1) * 100)
    return make_question(
        "arithmetic",
        f"A price is raised by {pct}% and the new price is then cut by {pct}%. By how many percent has the "
        "price changed overall? Give a signed number (negative for a decrease).",
        "the overall change is {} percent",
        [
            (change, f"{_num(up)} x {_num(down)} = {_num(up * down)}"),
            ("0", "the rise and the cut cancel out"),
            (change.lstrip("-"), ""),
        ],
        numeric=True,
        tags=("percentages",),
    )


def _gen_average_speed(rng: random.Random) -> Question:
    slow, fast = rng.choice(((30, 60), (40, 60), (20, 30), (60, 90), (12, 24), (40, 120), (30, 70), (60, 120)))
    harmonic = Decimal(2 * slow * fast) / (slow + fast)
    return make_question(
        "arithmetic",
        f"A cyclist rides to a town at {slow} km/h and returns along the same road at {fast} km/h. What is "
        "the average speed for the whole round trip, in km/h?",
        "the average speed is {} km/h",
        [
            (_num(harmonic), "the average is total distance over total time and the slower leg takes longer"),
            (_num(Decimal(slow + fast) / 2), "the average of the two speeds gives it"),
            (_num(harmonic / 2), ""),
        ],
        numeric=True,
        evidence=("Average speed is total distance travelled divided by total time taken.",),
        tags=("averages",),
    )


def _gen_sum_to_n(rng: random.Random) -> Question:
    n = rng.randrange(20, 101, 2)
    return make_question(
        "arithmetic",
        f"What is the sum of all whole numbers from 1 to {n}, inclusive?",
        f"the sum from 1 to {n} is {{}}",
        [
            (str(n * (n + 1) // 2), f"pairing the numbers gives {n // 2} pairs that each add up to {n + 1}"),
            (str(n * (n - 1) // 2), f"{n} x {n - 1} / 2 = {n * (n - 1) // 2}"),
            (str(n * n // 2), ""),
        ],
        numeric=True,
        evidence=("The sum 1 + 2 + ... + n equals n(n + 1)/2.",),
        tags=("series",),
    )


def _gen_miles(rng: random.Random) -> Question:
    miles = Decimal(rng.randint(3, 60))
    return make_question(
        "units",
        f"How many kilometres are there in {miles} miles? Round to one decimal place.",
        f"{miles} miles is about {{}} km",
        [
            (_q1(miles * Decimal("1.609344")), "one mile is 1.609344 km"),
            (_q1(miles * Decimal("1.5")), "a mile is roughly one and a half kilometres"),
            (_q1(miles / Decimal("1.609344")), "miles convert to km by dividing by 1.609344"),
        ],
        numeric=True,
        evidence=("One international mile is exactly 1.609344 kilometres.",),
        tags=("unit_slip",),
    )


def _gen_inches(rng: random.Random) -> Question:
    inches = Decimal(rng.randint(3, 40))
    return make_question(
        "units",
        f"How many centimetres are there in {inches} inches? Give the exact value.",
        f"{inches} inches is {{}} cm",
        [
            (_num(inches * Decimal("2.54")), "an inch is exactly 2.54 cm"),
            (_num(inches * Decimal("2.5")), "an inch is two and a half centimetres"),
            (_num((inches / Decimal("2.54")).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)), ""),
        ],
        numeric=True,
        evidence=("The international inch is defined as exactly 2.54 centimetres.",),
        tags=("unit_slip",),
    )


def _gen_fahrenheit(rng: random.Random) -> Question:
    celsius = rng.choice([c for c in range(-20, 45, 5) if c != -40])
    return make_question(
        "units",
        f"What is {celsius} degrees Celsius in degrees Fahrenheit?",
        f"{celsius} degrees Celsius is {{}} degrees Fahrenheit",
        [
            (str(celsius * 9 // 5 + 32), "you multiply by nine fifths and then add thirty-two"),
            (str(celsius * 9 // 5), "you multiply by nine fifths"),
            (str(celsius * 2 + 30), "double it and add thirty is the usual rule"),
        ],
        numeric=True,
        evidence=("To convert a Celsius temperature to Fahrenheit, multiply it by 9/5 and then add 32.",),
        tags=("temperature",),
    )


def _gen_speed_units(rng: random.Random) -> Question:
    kmh = rng.choice((18, 36, 54, 72, 90, 108, 126, 144))
    return make_question(
        "units",
        f"What is {kmh} km/h in metres per second?",
        f"{kmh} km/h is {{}} m/s",
        [
            (_num(Decimal(kmh) / Decimal("3.6")), "dividing km/h by 3.6 gives m/s"),
            (_num(Decimal(kmh) * Decimal("3.6")), "multiplying by 3.6 converts km/h to m/s"),
            (str(kmh * 1000 // 60), ""),
        ],
        numeric=True,
        evidence=("One km/h is 1000 metres per 3600 seconds, so dividing a speed in km/h by 3.6 gives m/s.",),
        tags=("unit_slip",),
    )


def _gen_kibibytes(rng: random.Random) -> Question:
    kib = rng.randint(2, 64)
    return make_question(
        "units",
        f"How many bytes are there in {kib} KiB (kibibytes)?",
        f"{kib} KiB is {{}} bytes",
        [
            (str(kib * 1024), "a kibibyte is 1024 bytes"),
            (str(kib * 1000), "kilo means a thousand"),
            (str(kib * 1024 * 8), "every byte has eight bits"),
        ],
        numeric=True,
        evidence=("A kibibyte (KiB) is exactly 1024 bytes.",),
        tags=("unit_slip",),
    )


def _gen_square_metres(rng: random.Random) -> Question:
    area = rng.randint(2, 12)
    return make_question(
        "units",
        f"How many square centimetres are there in {area} square metres?",
        f"{area} square metres is {{}} square centimetres",
        [
            (str(area * 10000), "a square metre is 100 cm by 100 cm"),
            (str(area * 100), "there are 100 cm in a metre"),
            (str(area * 1000), ""),
        ],
        numeric=True,
        evidence=("One metre is 100 centimetres, so one square metre is 100 x 100 = 10000 square centimetres.",),
        tags=("unit_slip",),
    )


def _gen_minutes(rng: random.Random) -> Question:
    hours, minutes = rng.randint(2, 9), rng.randrange(5, 56, 5)
    return make_question(
        "units",
        f"How many minutes are there in {hours} hours and {minutes} minutes?",
        f"{hours} hours and {minutes} minutes is {{}} minutes",
        [
            (str(hours * 60 + minutes), f"{hours} x 60 + {minutes} = {hours * 60 + minutes}"),
            (str(hours * 100 + minutes), "each hour counts as a hundred minutes"),
            (str(hours * 60), ""),
        ],
        numeric=True,
        evidence=("One hour is 60 minutes.",),
        tags=("time_units",),
    )


_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTH_LENGTHS = (
    "April, June, September and November have 30 days; February has 28 days in common years and 29 in leap "
    "years; every other month has 31 days."
)


def _date_text(day: dt.date) -> str:
    return f"{calendar.month_name[day.month]} {day.day}, {day.year}"  # month_name is English in the C locale


def _random_date(rng: random.Random, first_year: int, last_year: int) -> dt.date:
    start, end = dt.date(first_year, 1, 1), dt.date(last_year, 12, 31)
    return start + dt.timedelta(days=rng.randint(0, (end - start).days))


def _leap_days_between(start: dt.date, end: dt.date) -> list[int]:
    """Years whose February 29 falls after ``start`` and on or before ``end``."""
    years = range(start.year, end.year + 1)
    return [y for y in years if calendar.isleap(y) and start < dt.date(y, 2, 29) <= end]


def _gen_weekday(rng: random.Random) -> Question:
    day = _random_date(rng, 1975, 2019)
    index = day.weekday()
    truth, later, earlier = _WEEKDAYS[index], _WEEKDAYS[(index + 1) % 7], _WEEKDAYS[(index - 1) % 7]
    reference = day - dt.timedelta(days=14)
    return make_question(
        "dates",
        f"What day of the week was {_date_text(day)}?",
        f"{_date_text(day)} was a {{}}",
        [
            (truth, f"{_date_text(reference)}, exactly two weeks earlier, was a {truth}"),
            (later, f"{_date_text(day - dt.timedelta(days=7))}, a week before, was a {later}"),
            (earlier, f"{_date_text(day + dt.timedelta(days=7))}, a week later, was a {earlier}"),
        ],
        evidence=(f"Calendar reference: {_date_text(reference)} was a {truth}.",),
        tags=("weekday",),
    )


def _gen_days_between(rng: random.Random) -> Question:
    start = _random_date(rng, 2015, 2024)
    span = rng.randint(20, 400)
    end = start + dt.timedelta(days=span)
    months = (end.year - start.year) * 12 + end.month - start.month
    thirty = months * 30 + end.day - start.day  # the "every month has 30 days" shortcut
    leap_years = _leap_days_between(start, end)
    evidence = (f"{leap_years[0]} was a leap year, so February {leap_years[0]} had 29 days.",) if leap_years else ()
    return make_question(
        "dates",
        f"How many days after {_date_text(start)} is {_date_text(end)}?",
        "the gap is {} days",
        [
            (str(span), "the days left in each month add up to that"),
            (str(span + 1), "both the start date and the end date count"),
            (
                str(thirty) if thirty not in (span, span + 1) else str(span - 1),
                "every month can be treated as 30 days",
            ),
        ],
        numeric=True,
        evidence=(*evidence, _MONTH_LENGTHS),
        tags=("date_arithmetic", *(("leap_year",) if leap_years else ())),
    )


def _gen_add_days(rng: random.Random) -> Question:
    crosses_leap_day = rng.random() < 0.5
    if crosses_leap_day:
        year = rng.choice(range(1996, 2029, 4))
        start = dt.date(year, rng.choice((1, 2)), rng.randint(1, 28))
        span = rng.randint((dt.date(year, 3, 1) - start).days, 120)
    else:
        start, span = _random_date(rng, 2015, 2024), rng.randint(10, 200)
    end = start + dt.timedelta(days=span)
    crosses_leap_day = bool(_leap_days_between(start, end))
    after, before = (end + dt.timedelta(days=1)).isoformat(), (end - dt.timedelta(days=1)).isoformat()
    if crosses_leap_day:
        leap = _leap_days_between(start, end)[0]
        rows = [
            (end.isoformat(), f"{leap} is a leap year, so February {leap} has 29 days"),
            (after, f"February {leap} has 28 days"),
            (before, ""),
        ]
        evidence = (f"{leap} is a leap year, so February {leap} has 29 days.",)
    else:
        rows = [
            (end.isoformat(), "a month-by-month count lands on that date"),
            (before, "the start date counts as day one"),
            (after, ""),
        ]
        evidence = (_MONTH_LENGTHS,)
    return make_question(
        "dates",
        f"What date is {span} days after {_date_text(start)}? Give the answer as YYYY-MM-DD.",
        f"{span} days after {_date_text(start)} is {{}}",
        rows,
        evidence=evidence,
        tags=("date_arithmetic", *(("leap_year",) if crosses_leap_day else ())),
    )


def _gen_leap_count(rng: random.Random) -> Question:
    century = rng.choice((1800, 1900, 2100))
    first, last = century - rng.randint(1, 15), century + rng.randint(1, 15)
    truth = sum(calendar.isleap(y) for y in range(first, last + 1))
    return make_question(
        "dates",
        f"How many leap years are there from {first} to {last}, inclusive, in the Gregorian calendar?",
        f"the number of leap years from {first} to {last} is {{}}",
        [
            (str(truth), f"{century} is not a leap year because it is not divisible by 400"),
            (str(truth + 1), "every fourth year is a leap year"),
            (str(truth - 1), ""),
        ],
        numeric=True,
        evidence=(
            "In the Gregorian calendar a century year is a leap year only if it is divisible by 400, so "
            f"{century} is not a leap year.",
        ),
        tags=("leap_year",),
    )


# Code items evaluate expressions that this module builds from integer literals, so eval() is safe here;
# it guarantees that the ground truth is what Python really prints.
def _code_item(expr: str, rows: Sequence[Sequence[str]], doc: str, tag: str, **extra: object) -> Question:
    truth = repr(eval(expr))  # literal-only expression built above
    if truth != rows[0][0]:
        raise ValueError(f"{expr!r} evaluates to {truth}, not {rows[0][0]}")
    return make_question(
        "code",
        f"What does the Python expression `{expr}` evaluate to?",
        "it evaluates to {}",
        rows,
        evidence=(doc,),
        tags=(tag,),
        **extra,
    )


def _gen_floor_division(rng: random.Random) -> Question:
    divisor = rng.choice((2, 4, 5))
    dividend = rng.choice([a for a in range(5, 30) if a % divisor])
    return _code_item(
        f"-{dividend} // {divisor}",
        [
            (str(-dividend // divisor), "// floors toward negative infinity"),
            (str(-(dividend // divisor)), "integer division just drops the fractional part"),
            (_num(-Decimal(dividend) / divisor), "dividing gives the plain decimal result"),
        ],
        "Python's floor division operator // rounds the quotient down toward negative infinity.",
        "floor_division",
        numeric=True,
    )


def _gen_modulo(rng: random.Random) -> Question:
    divisor = rng.randint(3, 7)
    dividend = rng.choice([a for a in range(5, 30) if a % divisor])
    rest = dividend % divisor
    return _code_item(
        f"{dividend} % -{divisor}",
        [
            (str(rest - divisor), "the result of % takes the sign of the divisor"),
            (str(rest), "a remainder is never negative"),
            (str(-rest), "the remainder takes the sign of the negative operand"),
        ],
        "In Python, the result of x % y has the same sign as y (or is zero).",
        "modulo",
        numeric=True,
    )


def _gen_power(rng: random.Random) -> Question:
    a, b, c = rng.choice(((2, 3, 2), (2, 2, 3), (3, 3, 2), (2, 4, 2), (3, 2, 3), (4, 3, 2), (2, 5, 2)))
    return _code_item(
        f"{a} ** {b} ** {c}",
        [
            (
                str(a ** (b**c)),
                f"** groups from the right and {b} ** {c} is worked out before the outer power",
            ),
            (str((a**b) ** c), f"{a} ** {b} = {a**b} comes first and is then raised to {c}"),
            (str(a ** (b + c)), "the exponents add up"),
        ],
        "In Python, ** is right-associative: a ** b ** c is evaluated as a ** (b ** c).",
        "operator_precedence",
        numeric=True,
    )


def _gen_round_half(rng: random.Random) -> Question:
    even, odd = rng.randrange(0, 13, 2), rng.randrange(1, 14, 2)
    return _code_item(
        f"round({even}.5) + round({odd}.5)",
        [
            (str(even + odd + 1), "round() sends exact halves to the nearest even integer"),
            (str(even + odd + 2), "halves always round up"),
            (str(even + odd), "round() drops the fractional part"),
        ],
        "Python's built-in round() rounds a value exactly halfway between two integers to the even one.",
        "rounding",
        numeric=True,
    )


def _gen_xor(rng: random.Random) -> Question:
    b = rng.randint(2, 4)
    a = rng.choice([x for x in range(3, 13) if x & b])
    return _code_item(
        f"{a} ^ {b}",
        [
            (str(a ^ b), "^ is bitwise exclusive or"),
            (str(a**b), "^ raises to a power"),
            (str(a | b), "^ combines the bits of both numbers"),
        ],
        "In Python, ^ is the bitwise exclusive-or operator on integers; exponentiation is written **.",
        "operators",
        numeric=True,
    )


def _gen_string_digits(rng: random.Random) -> Question:
    if rng.random() < 0.5:
        a, b = rng.randint(10, 99), rng.randint(1, 9)
        expr, number, joined = f'"{a}" + "{b}"', a + b, "+ on two strings joins them end to end"
    else:
        a, b = rng.randint(2, 9), rng.randint(2, 5)
        expr, number, joined = f'"{a}" * {b}', a * b, "multiplying a string by an integer repeats it"
    return _code_item(
        expr,
        [
            (repr(eval(expr)), joined),  # literal-only expression built above
            (str(number), "the digits are converted to numbers first"),
            ("TypeError", "strings of digits cannot be combined like that"),
        ],
        "In Python, + on two strings concatenates them and * between a string and an integer repeats the "
        "string; neither converts digits to numbers.",
        "strings",
        claims={"TypeError": "it raises a {}"},
    )


def _gen_sum_range(rng: random.Random) -> Question:
    start = rng.randint(1, 9)
    stop = start + rng.randint(3, 15)
    truth = sum(range(start, stop))
    return _code_item(
        f"sum(range({start}, {stop}))",
        [
            (str(truth), "range stops before its end value"),
            (str(truth + stop), "range includes both endpoints"),
            (str(truth + stop - start), "range skips its start value and includes its end value"),
        ],
        "range(start, stop) starts at start and stops before stop; the stop value itself is never included.",
        "off_by_one",
        numeric=True,
    )


def _gen_len_range(rng: random.Random) -> Question:
    start, step = rng.randint(0, 5), rng.randint(2, 5)
    stop = start + rng.choice([d for d in range(7, 31) if d % step])
    truth = len(range(start, stop, step))
    return _code_item(
        f"len(range({start}, {stop}, {step}))",
        [
            (
                str(truth),
                "every step that starts below the stop value counts, including the last partial one",
            ),
            (str(truth - 1), "the span divided by the step gives the count"),
            (str(truth + 1), "range includes its stop value"),
        ],
        "range(start, stop, step) yields start, start + step, and so on, for every value below stop.",
        "off_by_one",
        numeric=True,
    )


def _gen_list_repeat(rng: random.Random) -> Question:
    a, b = rng.sample(range(1, 10), 2)
    times = rng.randint(2, 3)
    return _code_item(
        f"[{a}, {b}] * {times}",
        [
            (repr([a, b] * times), "multiplying a list repeats its elements"),
            (repr([a * times, b * times]), "the multiplication applies to each element"),
            (repr([[a, b]] * times), "the list is repeated as nested copies"),
        ],
        "Multiplying a list by an integer n creates a new list containing the original elements repeated n times.",
        "lists",
    )


def _gen_aliasing(rng: random.Random) -> Question:
    values = rng.sample(range(1, 10), rng.randint(2, 5))
    appended = rng.randint(10, 99)
    snippet = f"x = {values}\ny = x\ny.append({appended})\nprint(len(x) + len(y))"
    namespace: dict[str, object] = {}
    exec(snippet.rsplit("\n", 1)[0], namespace)  # the snippet is built above from literals
    truth = eval("len(x) + len(y)", namespace)
    n = len(values)
    return make_question(
        "code",
        f"What does this Python snippet print?\n\n{snippet}",
        "it prints {}",
        [
            (str(truth), "y = x makes both names refer to the same list and both lengths grow"),
            (str(2 * n + 1), "y is an independent copy and only y grows"),
            (str(2 * n), ""),
        ],
        numeric=True,
        evidence=(
            "Assigning a list to a second name does not copy it: both names refer to the same list object, "
            "so a change made through one name is visible through the other.",
        ),
        tags=("aliasing",),
    )


def _gen_price_pair(rng: random.Random) -> Question:
    big, small = rng.choice(
        (
            ("notebook", "pen"),
            ("racket", "shuttlecock"),
            ("lamp", "bulb"),
            ("jacket", "scarf"),
            ("kite", "string"),
        )
    )
    cheap, gap = rng.randrange(5, 50, 5), rng.choice((100, 150, 200, 250, 300))
    total = gap + 2 * cheap
    return make_question(
        "everyday_reasoning",
        f"A {big} and a {small} cost ${total // 100}.{total % 100:02d} in total. The {big} costs "
        f"${gap // 100}.{gap % 100:02d} more than the {small}. How many cents does the {small} cost?",
        f"the {small} costs {{}} cents",
        [
            (str(cheap), "the difference comes off the total first and the rest is split equally"),
            (str(2 * cheap), "taking the difference off the total leaves the price"),
            (str(cheap + gap), ""),
        ],
        numeric=True,
        tags=("trick_question",),
    )


def _gen_parallel_work(rng: random.Random) -> Question:
    machine, product = rng.choice((("machine", "widget"), ("printer", "poster"), ("robot", "box"), ("oven", "loaf")))
    plural = {"box": "boxes", "loaf": "loaves"}.get(product, product + "s")
    count, minutes = rng.randint(3, 8), rng.randint(2, 12)
    more = count * rng.randint(2, 10)
    return make_question(
        "everyday_reasoning",
        f"If {count} {machine}s take {minutes} minutes to make {count} {plural}, how many minutes do {more} "
        f"{machine}s take to make {more} {plural}?",
        "it takes {} minutes",
        [
            (str(minutes), f"each {machine} makes one {product} in that time, and they all work in parallel"),
            (str(more), "the numbers all scale together"),
            (str(minutes * more // count), f"more {plural} take proportionally longer"),
        ],
        numeric=True,
        tags=("trick_question",),
    )


def _gen_doubling(rng: random.Random) -> Question:
    weed, pond = rng.choice((("algae", "pond"), ("duckweed", "lake"), ("mould", "dish"), ("moss", "roof")))
    day = rng.randrange(12, 61, 2)
    return make_question(
        "everyday_reasoning",
        f"A patch of {weed} doubles in area every day. It covers the whole {pond} on day {day}. On which "
        f"day did it cover exactly half of the {pond}?",
        "it covered half on day {}",
        [
            (str(day - 1), "it doubles overnight and was half the size one day earlier"),
            (str(day // 2), "half the area means half the time"),
            (str(day - 2), ""),
        ],
        numeric=True,
        tags=("trick_question",),
    )


def _gen_fence_posts(rng: random.Random) -> Question:
    spacing, gaps = rng.choice((2, 3, 4, 5, 6, 8, 10)), rng.randint(5, 20)
    return make_question(
        "everyday_reasoning",
        f"A straight fence {spacing * gaps} m long has a post at each end and a post every {spacing} m "
        "along it. How many posts are there?",
        "the fence has {} posts",
        [
            (str(gaps + 1), "there is always one more post than there are gaps"),
            (str(gaps), "dividing the length by the spacing gives the count"),
            (str(gaps + 2), "an extra post is needed for each end"),
        ],
        numeric=True,
        tags=("off_by_one",),
    )


def _gen_tablets(rng: random.Random) -> Question:
    count, every = rng.randint(3, 8), rng.choice((15, 20, 30, 45, 60))
    return make_question(
        "everyday_reasoning",
        f"You have {count} tablets and must take one every {every} minutes, starting with one right now. "
        "How many minutes from now will you take the last tablet?",
        "the last tablet is taken after {} minutes",
        [
            (str((count - 1) * every), "the opening tablet is taken at minute zero"),
            (str(count * every), "each tablet accounts for one interval"),
            (str((count - 2) * every), ""),
        ],
        numeric=True,
        tags=("off_by_one",),
    )


def _gen_clock(rng: random.Random) -> Question:
    gap, few, many = rng.randint(1, 3), rng.randint(3, 7), rng.randint(8, 12)
    first_time = (few - 1) * gap
    proportional = Decimal(many * first_time) / few
    return make_question(
        "everyday_reasoning",
        f"A clock takes {first_time} seconds to strike {few} times at {few} o'clock, with equal gaps "
        f"between strikes. How many seconds does it take to strike {many} times at {many} o'clock?",
        "it takes {} seconds",
        [
            (
                str((many - 1) * gap),
                "the time is in the gaps between strikes, and there is one gap fewer than strikes",
            ),
            (
                _num(proportional.quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)),
                "the time scales with the strikes",
            ),
            (str(many * gap), ""),
        ],
        numeric=True,
        tags=("off_by_one",),
    )


def _gen_socks(rng: random.Random) -> Question:
    colours = rng.randint(3, 7)
    return make_question(
        "everyday_reasoning",
        f"A drawer holds socks in {colours} colours, many of each. In the dark, what is the smallest number "
        "of socks you must take to be sure of two of the same colour?",
        "you need {} socks",
        [
            (
                str(colours + 1),
                "one sock of each colour can still leave no match and one more sock forces a pair",
            ),
            ("2", "a pair is just two socks"),
            (str(colours), "one sock per colour covers every colour"),
        ],
        numeric=True,
        tags=("pigeonhole",),
    )


def _gen_boxes(rng: random.Random) -> Question:
    size = rng.choice((6, 10, 12, 15, 20))
    eggs = rng.choice([e for e in range(50, 201) if e % size])
    return make_question(
        "everyday_reasoning",
        f"Eggs are packed in boxes of {size}. How many boxes can be completely filled from {eggs} eggs?",
        "{} boxes can be filled",
        [
            (str(eggs // size), "the leftover eggs are not enough for another full box"),
            (str(-(-eggs // size)), "every egg needs a box and the count rounds up"),
            (_num((Decimal(eggs) / size).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)), ""),
        ],
        numeric=True,
        tags=("division",),
    )


Generator = Callable[[random.Random], Question]
NON_NUMERIC_GENERATORS: tuple[Generator, ...] = (
    _gen_weekday,
    _gen_add_days,
    _gen_string_digits,
    _gen_list_repeat,
)
NUMERIC_GENERATORS: tuple[Generator, ...] = (
    *(_gen_price, _gen_precedence, _gen_percent_of, _gen_percent_change, _gen_average_speed, _gen_sum_to_n),
    *(_gen_miles, _gen_inches, _gen_fahrenheit, _gen_speed_units, _gen_kibibytes, _gen_square_metres),
    *(_gen_minutes, _gen_days_between, _gen_leap_count),
    *(
        _gen_floor_division,
        _gen_modulo,
        _gen_power,
        _gen_round_half,
        _gen_xor,
        _gen_sum_range,
        _gen_len_range,
    ),
    _gen_aliasing,
    *(_gen_price_pair, _gen_parallel_work, _gen_doubling, _gen_fence_posts, _gen_tablets, _gen_clock),
    *(_gen_socks, _gen_boxes),
)


def draw_question(rng: random.Random, generator: Generator) -> Question:
    """Draw parameters until the item's phrases are unambiguous (rare collisions such as 3 x 4 = 12 vs 12)."""
    for _ in range(500):
        item = generator(rng)
        if not question_problems(item):
            return item
    raise RuntimeError(f"{generator.__name__} keeps producing ambiguous items")
