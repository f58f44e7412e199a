//! Word lists the generators draw names and text from.

/// First names.
pub static FIRST_NAMES: &[&str] = &[
    "Ada", "Ben", "Chloe", "Dmitri", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kemal",
    "Lena", "Mateo", "Nadia", "Oscar", "Priya", "Quinn", "Rosa", "Sven", "Tariq", "Uma", "Viktor",
    "Wen", "Ximena", "Yusuf", "Zoe", "Amara", "Bruno", "Camille", "Dario", "Esme", "Felix",
];

/// Family names.
pub static LAST_NAMES: &[&str] = &[
    "Abbott",
    "Baker",
    "Castro",
    "Dubois",
    "Eriksen",
    "Fischer",
    "Garcia",
    "Haddad",
    "Ivanova",
    "Jensen",
    "Kowalski",
    "Larsen",
    "Moreau",
    "Nakamura",
    "Okafor",
    "Petrov",
    "Quintero",
    "Rossi",
    "Schmidt",
    "Tanaka",
    "Usman",
    "Varga",
    "Weber",
    "Xu",
    "Yilmaz",
    "Zielinski",
];

/// Cities.
pub static CITIES: &[&str] = &[
    "Amsterdam",
    "Berlin",
    "Cairo",
    "Denver",
    "Edinburgh",
    "Florence",
    "Geneva",
    "Hanoi",
    "Istanbul",
    "Jakarta",
    "Kyoto",
    "Lisbon",
    "Madrid",
    "Nairobi",
    "Oslo",
    "Porto",
    "Quito",
    "Riga",
    "Seoul",
    "Toronto",
    "Utrecht",
    "Valencia",
    "Warsaw",
    "Zagreb",
];

/// Ordinary English words.
pub static WORDS: &[&str] = &[
    "apple", "bridge", "candle", "desert", "engine", "forest", "garden", "harbor", "island",
    "jacket", "kettle", "ladder", "meadow", "needle", "orange", "pencil", "quartz", "river",
    "saddle", "tunnel", "umbrella", "valley", "window", "yellow", "zipper", "anchor", "basket",
    "copper", "dragon", "feather", "glacier", "hammer", "insect", "jungle", "lantern", "marble",
    "number", "oyster", "pepper", "rocket", "silver", "timber", "velvet", "walnut", "blossom",
    "canyon", "dolphin", "ember", "falcon", "granite", "horizon", "ivory", "jasmine", "kernel",
];

/// The months of the year, in English.
pub static MONTHS: &[&str] = &[
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
