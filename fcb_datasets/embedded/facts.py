"""The fact tables written for the embedded set: geography, science and everyday items, each with the usual slips."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fcb_datasets.embedded.questions import Question, make_question, question_problems


def _facts(subject: str, rows: Iterable[tuple[Any, ...]], *, numeric: bool = False) -> list[Question]:
    """Rows are ``(question, claim, truth_row, wrong_rows, evidence[, tags])``; see the tables below."""
    items = []
    for question, claim, truth_row, wrong_rows, evidence, *rest in rows:
        evidence = (evidence,) if isinstance(evidence, str) else tuple(evidence)
        tags = ("misconception", *(rest[0] if rest else ()))
        items.append(
            make_question(
                subject,
                question,
                claim,
                [truth_row, *wrong_rows],
                evidence=evidence,
                numeric=numeric,
                tags=tags,
            )
        )
    return items


# Only settled, unambiguous facts.  Left out as open to dispute: the longest river (Nile or Amazon), the
# capitals of Switzerland (no de jure capital), Bolivia and South Africa (several seats), Japan (no law names
# Tokyo), Kazakhstan and Myanmar (renamed or variously spelt), the most populous country and the planet with
# the most moons (both change over time), the planet with the longest day (sidereal vs solar), the natural
# range of penguins (Galapagos penguins reach the equator) and the number of continents (convention).
_GEOGRAPHY = _facts(
    "geography",
    [
        (
            "What is the capital city of Australia?",
            "the capital of Australia is {}",
            ("Canberra", "it was purpose-built as the national capital", "the federal parliament sits there"),
            [
                ("Sydney", "it is the largest and best-known city"),
                ("Melbourne", "the federal parliament first met there"),
            ],
            "Canberra is the capital city of Australia and the seat of its federal parliament.",
        ),
        (
            "What is the capital of Canada?",
            "the capital of Canada is {}",
            ("Ottawa", "Parliament Hill and the federal government are located there"),
            [
                ("Toronto", "it is the largest city in the country"),
                ("Montreal", "it is a major historic city"),
            ],
            "Ottawa, in the province of Ontario, is the capital of Canada.",
        ),
        (
            "What is the capital of Brazil?",
            "the capital of Brazil is {}",
            ("Brasilia", "it was built in the interior as a planned capital"),
            [
                ("Rio de Janeiro", "it is the most famous Brazilian city"),
                ("Sao Paulo", "it is the largest city"),
            ],
            "Brasilia, a planned city inaugurated in 1960, is the capital of Brazil.",
        ),
        (
            "What is the capital of Turkey?",
            "the capital of Turkey is {}",
            ("Ankara", "it became the capital when the republic was founded"),
            [("Istanbul", "it is the largest and most famous city"), ("Izmir", "it is a major port city")],
            "Ankara is the capital of Turkey.",
        ),
        (
            "What is the capital of New Zealand?",
            "the capital of New Zealand is {}",
            ("Wellington", "Parliament and the government ministries are located there"),
            [
                ("Auckland", "it is by far the largest city"),
                ("Christchurch", "it is the largest South Island city"),
            ],
            "Wellington, at the southern end of the North Island, is the capital of New Zealand.",
        ),
        (
            "What is the capital of Nigeria?",
            "the capital of Nigeria is {}",
            ("Abuja", "the government moved to this planned city in 1991"),
            [("Lagos", "it is the largest city"), ("Kano", "it is a major northern city")],
            "Abuja has been the capital of Nigeria since 1991.",
        ),
        (
            "What is the capital of Morocco?",
            "the capital of Morocco is {}",
            ("Rabat", "the royal palace and the parliament are there"),
            [("Casablanca", "it is the largest city"), ("Marrakesh", "it is the best-known tourist city")],
            "Rabat is the capital of Morocco.",
        ),
        (
            "What is the capital of Vietnam?",
            "the capital of Vietnam is {}",
            ("Hanoi", "the national government sits there"),
            [("Ho Chi Minh City", "it is the largest city"), ("Hue", "it was the imperial capital")],
            "Hanoi is the capital of Vietnam.",
        ),
        (
            "What is the capital of Pakistan?",
            "the capital of Pakistan is {}",
            ("Islamabad", "it was built as a planned capital in the 1960s"),
            [("Karachi", "it is the largest city"), ("Lahore", "it is the cultural centre of the country")],
            "Islamabad is the capital of Pakistan.",
        ),
        (
            "What is the capital of the US state of California?",
            "the capital of California is {}",
            ("Sacramento", "the state legislature meets there"),
            [
                ("Los Angeles", "it is the largest city in the state"),
                ("San Francisco", "it is the best-known city"),
            ],
            "Sacramento is the capital of the US state of California.",
        ),
        (
            "What is the capital of New York State?",
            "the capital of New York State is {}",
            ("Albany", "the state legislature meets there"),
            [
                ("New York City", "it is the largest city in the state"),
                ("Buffalo", "it is a big upstate city"),
            ],
            "Albany is the capital of the US state of New York.",
        ),
        (
            "What is the capital of the US state of Texas?",
            "the capital of Texas is {}",
            ("Austin", "the state capitol building is there"),
            [("Houston", "it is the largest city in Texas"), ("Dallas", "it is a major business centre")],
            "Austin is the capital of the US state of Texas.",
        ),
        (
            "What is the capital of the US state of Florida?",
            "the capital of Florida is {}",
            ("Tallahassee", "the state legislature meets there"),
            [
                ("Miami", "it is the best-known city in Florida"),
                ("Orlando", "it is a large city in the centre"),
            ],
            "Tallahassee is the capital of the US state of Florida.",
        ),
        (
            "What is the capital of the US state of Illinois?",
            "the capital of Illinois is {}",
            ("Springfield", "the state capitol is there"),
            [("Chicago", "it is by far the largest city in Illinois"), ("Peoria", "it is a central city")],
            "Springfield is the capital of the US state of Illinois.",
        ),
        (
            "What is the capital of the US state of Washington?",
            "the capital of Washington State is {}",
            ("Olympia", "the state legislature meets there"),
            [("Seattle", "it is the largest city in the state"), ("Spokane", "it is the main eastern city")],
            "Olympia is the capital of the US state of Washington.",
        ),
        (
            "What is the capital of Scotland?",
            "the capital of Scotland is {}",
            ("Edinburgh", "the Scottish Parliament sits there"),
            [("Glasgow", "it is the largest city in Scotland"), ("Aberdeen", "it is a major northern city")],
            "Edinburgh is the capital of Scotland and home to the Scottish Parliament.",
        ),
        (
            "What is the capital of India?",
            "the capital of India is {}",
            ("New Delhi", "it is the seat of the national government"),
            [
                ("Mumbai", "it is the largest city and financial centre"),
                ("Kolkata", "it was the capital under British rule"),
            ],
            "New Delhi is the capital of India.",
        ),
        (
            "Which is the largest ocean on Earth?",
            "the largest ocean is the {} Ocean",
            ("Pacific", "it covers about a third of Earth's surface"),
            [
                ("Atlantic", "it is the ocean people hear about most"),
                ("Indian", "it stretches across half the globe"),
            ],
            "The Pacific Ocean is the largest and deepest of Earth's oceans.",
        ),
        (
            "Which country has the largest total area?",
            "the largest country by area is {}",
            ("Russia", "it spans eastern Europe and all of northern Asia"),
            [
                ("Canada", "it stretches across the whole of northern North America"),
                ("China", "it is a huge country"),
            ],
            "Russia is the largest country in the world by area, covering more than 17 million square kilometres.",
        ),
        (
            "What is the smallest country in the world by area?",
            "the smallest country by area is {}",
            ("Vatican City", "it is an enclave of less than half a square kilometre inside Rome"),
            [
                ("Monaco", "it is a tiny city-state on the coast"),
                ("San Marino", "it is a tiny enclave in Italy"),
            ],
            "Vatican City, an enclave within Rome, is the smallest independent state in the world by area.",
        ),
        (
            "What is the highest mountain on Earth, measured above sea level?",
            "the highest mountain above sea level is {}",
            ("Mount Everest", "its summit is about 8849 m above sea level"),
            [
                ("K2", "it is famous as the hardest of the great peaks"),
                ("Kangchenjunga", "it is a giant Himalayan peak"),
            ],
            "Mount Everest, on the border of Nepal and China, has the highest summit above sea level on Earth.",
        ),
        (
            "Counting cold polar deserts as well as hot ones, which is the largest desert on Earth?",
            "the largest desert is {}",
            (
                "Antarctica",
                "a desert is defined by very low precipitation, not by heat",
                "the polar interior gets almost no precipitation",
            ),
            [
                ("the Sahara", "it is the biggest sandy desert"),
                ("the Gobi", "it is a vast and famous desert"),
            ],
            "A desert is a region with very little precipitation; on that definition Antarctica is the "
            "largest desert on Earth.",
            ("trick_question",),
        ),
        (
            "In which country is Mount Kilimanjaro?",
            "Mount Kilimanjaro is in {}",
            ("Tanzania", "it rises in the north of the country near Moshi"),
            [("Kenya", "it appears in so many safari photographs"), ("Uganda", "it is in East Africa")],
            "Mount Kilimanjaro, the highest mountain in Africa, is in northeastern Tanzania.",
        ),
        (
            "Which US state has the largest total area?",
            "the largest US state by area is {}",
            ("Alaska", "it is more than twice the size of any other state"),
            [
                ("Texas", "it is the largest of the contiguous states"),
                ("California", "it is very large and long"),
            ],
            "Alaska is the largest US state by area, more than twice the size of Texas.",
        ),
        (
            "Which of the five Great Lakes has the largest surface area?",
            "the largest of the Great Lakes is Lake {}",
            ("Superior", "it is the largest of them by both area and volume"),
            [("Michigan", "it is the one people name most often"), ("Huron", "it has a very long shoreline")],
            "Lake Superior is the largest of the Great Lakes by surface area and by volume.",
        ),
        (
            "In which country is the ancient city of Petra?",
            "Petra is in {}",
            ("Jordan", "it lies in the south of the country"),
            [("Egypt", "it is famous ancient stone architecture"), ("Syria", "it is in the Middle East")],
            "The ancient city of Petra is in southern Jordan.",
        ),
        (
            "On which continent is the Atacama Desert?",
            "the Atacama Desert is in {}",
            ("South America", "it lies in northern Chile"),
            [("Africa", "most famous deserts are there"), ("Asia", "many large deserts are there")],
            "The Atacama Desert lies in northern Chile, in South America.",
        ),
    ],
)

_SCIENCE = _facts(
    "science",
    [
        (
            "What is the chemical symbol for silver?",
            "the chemical symbol for silver is {}",
            ("Ag", "it comes from the Latin argentum"),
            [
                ("Si", "it uses the first two letters of the name"),
                ("Au", "the precious metals share a symbol pattern"),
            ],
            "The chemical symbol for silver is Ag, from the Latin argentum.",
        ),
        (
            "What is the chemical symbol for tin?",
            "the chemical symbol for tin is {}",
            ("Sn", "it comes from the Latin stannum"),
            [
                ("Ti", "it uses the first two letters of the name"),
                ("Tn", "it uses the first and last letters"),
            ],
            "The chemical symbol for tin is Sn, from the Latin stannum.",
        ),
        (
            "Which planet has the hottest average surface temperature?",
            "the hottest planet is {}",
            ("Venus", "its thick carbon dioxide atmosphere traps heat"),
            [("Mercury", "it is the closest planet to the Sun"), ("Mars", "it looks red and scorched")],
            "Venus has the hottest surface of any planet in the Solar System because its dense carbon "
            "dioxide atmosphere traps heat.",
        ),
        (
            "Which planet is closest to the Sun?",
            "the planet closest to the Sun is {}",
            ("Mercury", "it has the smallest orbit of all the planets"),
            [("Venus", "it is the hottest planet"), ("Mars", "it looks red and scorched")],
            "Mercury is the innermost planet of the Solar System.",
        ),
        (
            "Which is the largest planet in the Solar System?",
            "the largest planet is {}",
            ("Jupiter", "its mass is more than twice that of all the other planets combined"),
            [("Saturn", "its rings make it look the biggest"), ("Neptune", "it is a giant planet")],
            "Jupiter is the largest planet in the Solar System.",
        ),
        (
            "Which gas makes up most of Earth's atmosphere?",
            "most of Earth's atmosphere is {}",
            ("nitrogen", "it makes up roughly 78 percent of dry air"),
            [
                ("oxygen", "it is the gas we breathe"),
                ("carbon dioxide", "burning fuel releases so much of it"),
            ],
            "Dry air is about 78 percent nitrogen and about 21 percent oxygen by volume.",
        ),
        (
            "Which gas do plants take in from the air to carry out photosynthesis?",
            "plants take in {} for photosynthesis",
            ("carbon dioxide", "they turn its carbon into sugars using light energy"),
            [("oxygen", "all living things need it"), ("nitrogen", "it is the most common gas in air")],
            "In photosynthesis, plants take in carbon dioxide and water and use light energy to make "
            "sugars, releasing oxygen.",
        ),
        (
            "Which organ produces insulin in the human body?",
            "insulin is produced by the {}",
            ("pancreas", "its beta cells release it"),
            [("liver", "it handles blood sugar"), ("kidneys", "they filter the blood")],
            "Insulin is made by the beta cells of the pancreas.",
        ),
        (
            "What is the largest organ of the human body?",
            "the largest organ of the human body is the {}",
            ("skin", "it covers the whole body"),
            [("liver", "it is the biggest organ inside the body"), ("lungs", "they fill most of the chest")],
            "The skin is the largest organ of the human body.",
        ),
        (
            "Which red blood cell type can be given to patients of any ABO and RhD blood group?",
            "the universal red-cell donor type is {}",
            ("O negative", "it carries no A, B or RhD antigens"),
            [
                ("AB positive", "it carries every antigen and matches everyone"),
                ("O positive", "it is the most common type"),
            ],
            "Type O negative red blood cells lack the A, B and RhD antigens, so they can be given to "
            "patients of any blood type.",
        ),
        (
            "What is the hardest naturally occurring mineral?",
            "the hardest natural mineral is {}",
            ("diamond", "it tops the Mohs scale at 10"),
            [("corundum", "it is used as an industrial abrasive"), ("quartz", "it scratches glass easily")],
            "Diamond is the hardest naturally occurring mineral, rated 10 on the Mohs scale.",
        ),
        (
            "Which element makes up most of the Sun's mass?",
            "most of the Sun's mass is {}",
            ("hydrogen", "it accounts for roughly three quarters of the Sun's mass"),
            [("helium", "fusion produces huge amounts of it"), ("carbon", "it is common in stars")],
            "By mass, the Sun is about three quarters hydrogen, with most of the remainder helium.",
        ),
        (
            "Which vitamin does human skin make when exposed to sunlight?",
            "skin makes {} in sunlight",
            ("vitamin D", "ultraviolet B light drives its synthesis in the skin"),
            [("vitamin C", "it is the best-known vitamin"), ("vitamin A", "it is linked to eyesight")],
            "Human skin produces vitamin D when exposed to ultraviolet B radiation in sunlight.",
        ),
        (
            "A deficiency of which vitamin causes scurvy?",
            "scurvy is caused by a lack of {}",
            ("vitamin C", "sailors prevented it by eating citrus fruit"),
            [("vitamin D", "it affects bones and teeth"), ("vitamin B12", "it affects many tissues")],
            "Scurvy is caused by a prolonged lack of vitamin C (ascorbic acid).",
        ),
        (
            "What do honey bees collect from flowers to make honey?",
            "honey is made from {}",
            ("nectar", "bees evaporate most of its water and add enzymes"),
            [("pollen", "bees are always covered in it"), ("sap", "it is a sugary plant fluid")],
            "Honey bees make honey from flower nectar, which they store and dry in the comb.",
        ),
        (
            "To which class of animals do bats belong?",
            "bats are {}",
            ("mammals", "they have fur and feed their young on milk"),
            [("birds", "they fly with wings"), ("reptiles", "their wings are leathery")],
            "Bats are mammals: they have fur, nurse their young with milk, and are the only mammals capable "
            "of sustained flight.",
        ),
        (
            "What kind of animal is a whale shark?",
            "a whale shark is a {}",
            ("fish", "it is a shark and breathes through gills"),
            [("mammal", "it is a kind of whale"), ("reptile", "its skin is tough and scaly-looking")],
            "The whale shark is the largest living fish; it is a shark that breathes through gills.",
        ),
        (
            "What mainly causes Earth's seasons?",
            "Earth's seasons are caused mainly by {}",
            (
                "the tilt of Earth's axis",
                "the tilt changes how directly sunlight strikes each hemisphere",
                "the two hemispheres have opposite seasons at the same moment",
            ),
            [
                ("changes in Earth's distance from the Sun", "the orbit is an ellipse"),
                ("changes in the Sun's brightness", "the Sun's output varies"),
            ],
            (
                "Seasons happen because Earth's rotation axis is tilted by about 23.4 degrees relative to "
                "its orbit, so each hemisphere receives more direct sunlight for part of the year.",
                "Earth is closest to the Sun in early January, during the Northern Hemisphere winter.",
            ),
        ),
        (
            "Why does the clear daytime sky look blue?",
            "the blue colour of the sky comes from {}",
            ("Rayleigh scattering", "air molecules scatter blue light much more strongly than red light"),
            [
                ("reflection of the oceans", "the sea is blue and the sky mirrors it"),
                ("water vapour in the air", ""),
            ],
            "Air molecules scatter short blue wavelengths of sunlight much more strongly than long red "
            "ones; this Rayleigh scattering makes the daytime sky look blue.",
        ),
        (
            "What is the SI unit of force?",
            "the SI unit of force is the {}",
            ("newton", "one of them accelerates one kilogram at one metre per second squared"),
            [("joule", "force and energy go together"), ("pascal", "")],
            "The newton is the SI unit of force: one newton gives a mass of one kilogram an acceleration of "
            "one metre per second squared.",
        ),
        (
            "What is the SI unit of energy?",
            "the SI unit of energy is the {}",
            ("joule", "work done by a force over a distance is measured in it"),
            [
                ("watt", "electricity bills are about power and energy"),
                ("calorie", "food energy is given in it"),
            ],
            "The joule is the SI unit of energy; the watt, one joule per second, is the unit of power.",
        ),
        (
            "What is the SI unit of electrical resistance?",
            "the SI unit of resistance is the {}",
            ("ohm", "resistance is voltage divided by current"),
            [("volt", "it is the unit printed on every battery"), ("ampere", "")],
            "The ohm is the SI unit of electrical resistance.",
        ),
        (
            "What does a light-year measure?",
            "a light-year is a unit of {}",
            ("distance", "it is how far light travels in one year"),
            [("time", "it has year in its name"), ("speed", "it is about the speed of light")],
            "A light-year is the distance light travels in one year, about 9.46 trillion kilometres.",
            ("trick_question",),
        ),
        (
            "In which part of a plant cell does photosynthesis take place?",
            "photosynthesis takes place in the {}",
            ("chloroplasts", "they contain chlorophyll, which absorbs light"),
            [("mitochondria", "they are the powerhouses of the cell"), ("nucleus", "it controls the cell")],
            "In plant cells, photosynthesis takes place in chloroplasts, which contain the pigment chlorophyll.",
        ),
        (
            "Which blood vessels carry blood away from the heart?",
            "blood leaves the heart through the {}",
            ("arteries", "they have thick muscular walls to handle the pressure"),
            [
                ("veins", "they are the vessels you can see under the skin"),
                ("capillaries", "they reach every tissue"),
            ],
            "Arteries carry blood away from the heart; veins carry blood back towards it.",
        ),
        (
            "What is the chemical formula of common table salt?",
            "table salt is {}",
            ("NaCl", "it is sodium chloride"),
            [("KCl", "it is a chloride salt"), ("CaCl2", "it is the salt spread on icy roads")],
            "Common table salt is sodium chloride, with the chemical formula NaCl.",
        ),
        (
            "Which subatomic particle carries a negative electric charge?",
            "the {} carries a negative charge",
            ("electron", "current in a metal wire is a flow of these particles"),
            [("proton", "it is the charged particle in the nucleus"), ("neutron", "")],
            "Electrons carry a negative electric charge, protons a positive charge, and neutrons no charge.",
        ),
        (
            "Which element is the most abundant in Earth's crust by mass?",
            "the most abundant element in Earth's crust is {}",
            ("oxygen", "it is bound into silicate and oxide minerals"),
            [("silicon", "the crust is mostly silicate rock"), ("iron", "it dominates the planet's core")],
            "Oxygen is the most abundant element in Earth's crust, making up roughly 46 percent of its mass.",
        ),
        (
            "What is the SI base unit of thermodynamic temperature?",
            "the SI base unit of temperature is the {}",
            ("kelvin", "it starts from absolute zero"),
            [("degree Celsius", "it is the unit used in laboratories"), ("degree Fahrenheit", "")],
            "The kelvin is the SI base unit of thermodynamic temperature.",
        ),
        (
            "What is the name for the energy an object has because of its motion?",
            "the energy of motion is called {} energy",
            ("kinetic", "it depends on the mass and the speed of the object"),
            [("potential", "it is stored in the object"), ("thermal", "moving things warm up")],
            "Kinetic energy is the energy an object has because of its motion.",
        ),
        (
            "Which plant tissue carries water from the roots up to the leaves?",
            "water moves up the plant through the {}",
            ("xylem", "its hollow vessels carry water up from the roots"),
            [
                ("phloem", "it is the plant's transport tissue"),
                ("cambium", "it lies between the transport tissues"),
            ],
            "Xylem carries water and dissolved minerals from the roots to the rest of the plant; phloem "
            "carries sugars.",
        ),
        (
            "Which star is closest to Earth?",
            "the closest star to Earth is {}",
            ("the Sun", "Earth orbits it at about 150 million kilometres"),
            [
                ("Proxima Centauri", "it is the nearest star outside the Solar System"),
                ("Sirius", "it is the brightest star in the night sky"),
            ],
            "The Sun is a star, and at about 150 million kilometres it is by far the closest star to Earth.",
            ("trick_question",),
        ),
        (
            "Which chemical element is diamond made of?",
            "diamond is made of {}",
            ("carbon", "it is a rigid crystal lattice of a single element"),
            [("silicon", "it is a hard crystal like quartz"), ("boron", "")],
            "Diamond is a crystalline form of pure carbon.",
        ),
    ],
)

# Numeric facts are matched as numbers, so their reasons avoid digits (a stray "2" would count as an answer).
_SCIENCE_NUMERIC = _facts(
    "science",
    [
        (
            "How many hearts does an octopus have?",
            "an octopus has {} hearts",
            ("3", "it has a pair of gill hearts plus a main heart"),
            [
                ("1", "like most animals it has a single heart"),
                ("2", "it needs a heart for each side of the body"),
            ],
            "An octopus has three hearts: two pump blood through the gills and one pumps it to the rest of the body.",
        ),
        (
            "How many legs does a spider have?",
            "a spider has {} legs",
            ("8", "spiders are arachnids, not insects"),
            [("6", "it is a bug, like an insect"), ("10", "")],
            "Spiders are arachnids and have eight legs; insects have six.",
        ),
        (
            "How many chambers does the human heart have?",
            "the human heart has {} chambers",
            ("4", "it has a pair of atria and a pair of ventricles"),
            [("2", "it has a left side and a right side"), ("3", "")],
            "The human heart has four chambers: two atria and two ventricles.",
        ),
        (
            "How many chromosomes does a typical human body cell contain?",
            "a typical human body cell has {} chromosomes",
            ("46", "they come in pairs, one set from each parent"),
            [("48", "that was the count in older textbooks"), ("23", "")],
            "Typical human body cells contain 46 chromosomes, arranged as 23 pairs.",
        ),
        (
            "At standard sea-level pressure, what is the boiling point of pure water in degrees Fahrenheit?",
            "water boils at {} degrees Fahrenheit",
            ("212", "that is the standard reference point on the Fahrenheit scale"),
            [("100", "that is the familiar boiling point"), ("180", "")],
            "At standard atmospheric pressure, pure water boils at 212 degrees Fahrenheit (100 degrees Celsius).",
        ),
    ],
    numeric=True,
)

_EVERYDAY = _facts(
    "everyday_reasoning",
    [
        (
            "In a running race, you overtake the runner who is in second place. What position are you in now?",
            "you are now in {} place",
            ("second", "you take over the position of the runner you passed"),
            [("first", "passing a runner moves you ahead"), ("third", "")],
            "Overtaking a runner puts you in the position that runner held; the runner ahead of them is still ahead.",
            ("trick_question",),
        ),
    ],
)
FACT_QUESTIONS: tuple[Question, ...] = (*_GEOGRAPHY, *_SCIENCE, *_SCIENCE_NUMERIC, *_EVERYDAY)


def check_fact_tables() -> None:
    """Raise on any table entry whose phrases are ambiguous (a claim or reason that names a rival answer)."""
    for item in FACT_QUESTIONS:
        if problems := question_problems(item):
            raise ValueError(f"fact table entry {item.question!r}: {problems}")
