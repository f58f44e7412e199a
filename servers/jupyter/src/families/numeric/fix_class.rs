//! `fix-class` (held out): a small class (a bank account, an inventory, a bounded queue,
//! running statistics) whose methods have bugs; fix it until hidden scenarios pass.
//!
//! Each class has three bugs it can be given, in different methods or lines; levels change
//! the work: an easy class has one of them, a medium one two, a hard one all three.
//!
//! The hidden check builds the agent's class in a child process and calls its methods in
//! sequences the agent has never seen ([`super::class_check::class_check`]); the expected
//! results come from a model of the class here. One scenario of every instance is made to
//! expose each of the template's bugs.

use serde_json::{Value, json};

use super::class_check::class_check;
use crate::families::{Family, FamilySplit, Gen, Instance};
use crate::tasks::{Grader, TaskKind};

pub(super) const FAMILY: Family = Family {
    name: "fix-class",
    kind: TaskKind::Debugging,
    split: FamilySplit::TestOnly,
    levelled: true,
    about: "debugging: fix a class's methods (one to three bugs) until hidden usage scenarios pass",
    generate,
};

const MODULES: &[&str] = &["model.py", "domain.py", "core.py", "objects.py"];

/// One hidden scenario being written: how the object is built, the calls, their results.
struct Scenario {
    new: Vec<Value>,
    steps: Vec<Value>,
    results: Vec<Value>,
}

impl Scenario {
    fn new(args: Vec<Value>) -> Self {
        Self {
            new: args,
            steps: Vec::new(),
            results: Vec::new(),
        }
    }

    /// A call that returns `value`.
    fn ok(&mut self, method: &str, args: Vec<Value>, value: Value) {
        self.steps.push(json!([method, args]));
        self.results.push(json!(["ok", value]));
    }

    /// A call that raises `error`.
    fn raises(&mut self, method: &str, args: Vec<Value>, error: &str) {
        self.steps.push(json!([method, args]));
        self.results.push(json!(["raised", error]));
    }

    fn finish(self) -> (Value, Value) {
        (
            json!({"new": self.new, "steps": self.steps}),
            Value::from(self.results),
        )
    }
}

/// A class template's outcome: the class's name, its source, and the scenarios.
struct Class {
    name: &'static str,
    source: String,
    scenarios: Vec<Scenario>,
}

fn generate(g: &mut Gen) -> Instance {
    let module = *g.pick(MODULES);
    // Which of the class's three bugs it has: the level decides how many.
    let mut bug = [false; 3];
    for i in g.sample(&[0, 1, 2], g.level().pick(1, 2, 3)) {
        bug[i] = true;
    }
    let Class {
        name,
        source,
        mut scenarios,
    } = match g.index(4) {
        0 => account(g, bug),
        1 => inventory(g, bug),
        2 => queue(g, bug),
        _ => stats(g, bug),
    };
    g.shuffle(&mut scenarios);
    let (calls, expected): (Vec<Value>, Vec<Value>) =
        scenarios.into_iter().map(Scenario::finish).unzip();
    let header = format!(
        "\"\"\"The objects the team's tools share.\"\"\"\n\n# version {}.{}\n\n\n",
        g.int(1, 9),
        g.int(0, 999)
    );
    let prompt = prompt(g, module, name, bug.iter().filter(|b| **b).count());
    Instance::new(
        prompt,
        Grader::Check {
            code: class_check(module, name, &calls, &expected, 1e-7),
        },
    )
    .file(module, format!("{header}{source}").into_bytes())
}

/// The task's prompt for the class `class` in `module` with `bugs` bugs, in one of many
/// wordings; the module and the class's name (in backticks) are what a solver reads.
fn prompt(g: &mut Gen, module: &str, class: &str, bugs: usize) -> String {
    let opening = match g.index(4) {
        0 => format!("The module {module} in your home directory defines the class `{class}`."),
        1 => format!("In your home directory, the module {module} defines the class `{class}`."),
        2 => format!("Your home directory holds {module}, which defines the class `{class}`."),
        _ => format!("There is a module {module} in your home directory with the class `{class}`."),
    };
    let fault = if bugs == 1 {
        *g.pick(&[
            "One of its methods has a bug: the class does not behave as its docstring says.",
            "Its docstring is right, but a bug in one method makes the class misbehave.",
            "A bug in one of its methods makes it disagree with its docstring.",
        ])
    } else {
        *g.pick(&[
            "Its methods have bugs: the class does not behave as its docstring says.",
            "Its docstring is right, but bugs in its methods make the class misbehave.",
            "Several bugs make it disagree with its docstring.",
        ])
    };
    let fix = *g.pick(&[
        "Fix the class (keep its name, its methods and their parameters) so that it does what the docstring says.",
        "Repair it so that it behaves as documented, without renaming it or changing its methods' parameters.",
        "Make the class agree with its docstring; its name, methods and parameters stay as they are.",
    ]);
    let hidden = *g.pick(&[
        "Hidden tests will create objects of the class and call their methods in other sequences.",
        "Hidden scenarios you have not seen will build objects and call their methods.",
    ]);
    let close = *g.pick(&[
        "Then call final_answer with \"done\".",
        "When you have finished, call final_answer with \"done\".",
        "Finish by calling final_answer with \"done\".",
    ]);
    format!("{opening} {fault} {fix} {hidden} {close}")
}

fn account(g: &mut Gen, bug: [bool; 3]) -> Class {
    let name = *g.pick(&["Account", "BankAccount", "Wallet", "Ledger"]);
    // The bugs: a withdrawal of the whole balance refused, withdrawals recorded as positive,
    // refused withdrawals recorded too.
    let refuse = if bug[0] { ">=" } else { ">" };
    let record = format!(
        "        self._history.append({}amount)\n",
        if bug[1] { "" } else { "-" }
    );
    let check = format!(
        "        if amount <= 0 or amount {refuse} self._balance:\n            raise ValueError(\"cannot withdraw that amount\")\n"
    );
    let withdraw = if bug[2] {
        format!("{record}{check}        self._balance -= amount\n")
    } else {
        format!("{check}        self._balance -= amount\n{record}")
    };
    let (opening, deposit) = (g.int(0, 500), g.int(1, 300));
    let example = format!(
        "    Example: a = {name}({opening}); a.deposit({deposit}) returns {}, then\n        a.withdraw({}) returns 0.\n",
        opening + deposit,
        opening + deposit
    );
    let source = format!(
        "class {name}:\n    \"\"\"A bank account holding a whole number of cents.\n\n    {name}(opening) starts with `opening` cents (an int >= 0).\n    deposit(amount): adds `amount` (> 0) and returns the new balance; raises ValueError\n        if amount <= 0.\n    withdraw(amount): takes `amount` away and returns the new balance; raises ValueError if\n        amount <= 0 or amount is more than the balance (the balance may reach exactly 0).\n    balance(): the current balance.\n    history(): the amounts of the successful deposits and withdrawals, oldest first:\n        deposits positive, withdrawals negative.\n{example}    \"\"\"\n\n    def __init__(self, opening=0):\n        self._balance = opening\n        self._history = []\n\n    def deposit(self, amount):\n        if amount <= 0:\n            raise ValueError(\"a deposit must be positive\")\n        self._balance += amount\n        self._history.append(amount)\n        return self._balance\n\n    def withdraw(self, amount):\n{withdraw}        return self._balance\n\n    def balance(self):\n        return self._balance\n\n    def history(self):\n        return list(self._history)\n"
    );
    let mut scenarios = Vec::new();
    // Exposes every bug: an exact withdrawal, a refused one, then the history.
    let opening = g.int(50, 900);
    let first = g.int(1, opening - 1);
    let mut s = Scenario::new(vec![json!(opening)]);
    s.ok("withdraw", vec![json!(first)], json!(opening - first));
    s.ok("withdraw", vec![json!(opening - first)], json!(0));
    s.raises("withdraw", vec![json!(g.int(1, 50))], "ValueError");
    s.ok("history", vec![], json!([-first, first - opening]));
    s.ok("balance", vec![], json!(0));
    scenarios.push(s);
    for _ in 0..6 {
        let mut balance = g.int(0, 1000);
        let mut history: Vec<i64> = Vec::new();
        let mut s = Scenario::new(vec![json!(balance)]);
        for _ in 0..g.int(4, 12) {
            match g.index(5) {
                0 | 1 => {
                    let amount = if g.chance(0.1) {
                        g.int(-50, 0)
                    } else {
                        g.int(1, 500)
                    };
                    if amount <= 0 {
                        s.raises("deposit", vec![json!(amount)], "ValueError");
                    } else {
                        balance += amount;
                        history.push(amount);
                        s.ok("deposit", vec![json!(amount)], json!(balance));
                    }
                }
                2 | 3 => {
                    let amount = match g.index(4) {
                        0 => balance,
                        1 => balance + g.int(1, 100),
                        _ => g.int(1, balance.max(1)),
                    };
                    if amount <= 0 || amount > balance {
                        s.raises("withdraw", vec![json!(amount)], "ValueError");
                    } else {
                        balance -= amount;
                        history.push(-amount);
                        s.ok("withdraw", vec![json!(amount)], json!(balance));
                    }
                }
                _ => s.ok("balance", vec![], json!(balance)),
            }
        }
        s.ok("history", vec![], json!(history));
        scenarios.push(s);
    }
    Class {
        name,
        source,
        scenarios,
    }
}

fn inventory(g: &mut Gen, bug: [bool; 3]) -> Class {
    let name = *g.pick(&["Inventory", "Stock", "Warehouse", "Pantry"]);
    let add_return = if bug[2] {
        "quantity"
    } else {
        "self._counts[name]"
    };
    let zero = if bug[0] {
        ""
    } else {
        "        if self._counts[name] == 0:\n            del self._counts[name]\n"
    };
    let total = if bug[1] {
        "len(self._counts)"
    } else {
        "sum(self._counts.values())"
    };
    let (item, quantity) = (g.word(), g.int(2, 40));
    let example = format!(
        "    Example: s = {name}(); s.add(\"{item}\", {quantity}) returns {quantity}, then\n        s.remove(\"{item}\", {quantity}) returns 0 and \"{item}\" is no longer in s.items().\n"
    );
    let source = format!(
        "class {name}:\n    \"\"\"How many units of each item are in stock.\n\n    add(item, quantity): adds `quantity` (> 0) units of `item`; returns the item's new\n        count. Raises ValueError if quantity <= 0.\n    remove(item, quantity): removes `quantity` (> 0) units; returns the item's new count.\n        Raises ValueError if quantity <= 0 or fewer units are in stock, KeyError if the\n        item is not in stock at all. An item whose count reaches 0 is no longer in stock.\n    count(item): the units of `item` in stock (0 if none).\n    items(): the names of the items in stock, sorted alphabetically.\n    total(): the number of units in stock, all items together.\n{example}    \"\"\"\n\n    def __init__(self):\n        self._counts = {{}}\n\n    def add(self, name, quantity):\n        if quantity <= 0:\n            raise ValueError(\"quantity must be positive\")\n        self._counts[name] = self._counts.get(name, 0) + quantity\n        return {add_return}\n\n    def remove(self, name, quantity):\n        if quantity <= 0:\n            raise ValueError(\"quantity must be positive\")\n        if name not in self._counts:\n            raise KeyError(name)\n        if self._counts[name] < quantity:\n            raise ValueError(\"not enough in stock\")\n        self._counts[name] -= quantity\n{zero}        return self._counts.get(name, 0)\n\n    def count(self, name):\n        return self._counts.get(name, 0)\n\n    def items(self):\n        return sorted(self._counts)\n\n    def total(self):\n        return {total}\n"
    );
    let pool: Vec<String> = g
        .sample(crate::families::words::WORDS, 5)
        .into_iter()
        .map(str::to_owned)
        .collect();
    let mut scenarios = Vec::new();
    // Exposes every bug: a second add, a total over several units, an item removed to zero.
    let (a, b) = (pool[0].clone(), pool[1].clone());
    let (qa, qb, qc) = (g.int(2, 9), g.int(2, 9), g.int(2, 9));
    let mut s = Scenario::new(vec![]);
    s.ok("add", vec![json!(a), json!(qa)], json!(qa));
    s.ok("add", vec![json!(a), json!(qb)], json!(qa + qb));
    s.ok("add", vec![json!(b), json!(qc)], json!(qc));
    s.ok("total", vec![], json!(qa + qb + qc));
    s.ok("remove", vec![json!(b), json!(qc)], json!(0));
    let mut left = vec![a.clone()];
    left.sort();
    s.ok("items", vec![], json!(left));
    s.raises("remove", vec![json!(b), json!(1)], "KeyError");
    scenarios.push(s);
    for _ in 0..6 {
        let mut counts: std::collections::BTreeMap<String, i64> = Default::default();
        let mut s = Scenario::new(vec![]);
        for _ in 0..g.int(5, 14) {
            let item = g.pick(&pool).clone();
            let have = counts.get(&item).copied().unwrap_or(0);
            match g.index(6) {
                0 | 1 => {
                    let quantity = if g.chance(0.1) { 0 } else { g.int(1, 20) };
                    if quantity <= 0 {
                        s.raises("add", vec![json!(item), json!(quantity)], "ValueError");
                    } else {
                        counts.insert(item.clone(), have + quantity);
                        s.ok(
                            "add",
                            vec![json!(item), json!(quantity)],
                            json!(have + quantity),
                        );
                    }
                }
                2 => {
                    let quantity = match g.index(3) {
                        0 => have,
                        1 => have + g.int(1, 5),
                        _ => g.int(1, have.max(1)),
                    };
                    let args = vec![json!(item), json!(quantity)];
                    if quantity <= 0 {
                        s.raises("remove", args, "ValueError");
                    } else if have == 0 {
                        s.raises("remove", args, "KeyError");
                    } else if quantity > have {
                        s.raises("remove", args, "ValueError");
                    } else {
                        if have == quantity {
                            counts.remove(&item);
                        } else {
                            counts.insert(item.clone(), have - quantity);
                        }
                        s.ok("remove", args, json!(have - quantity));
                    }
                }
                3 => s.ok("count", vec![json!(item)], json!(have)),
                4 => s.ok("items", vec![], json!(counts.keys().collect::<Vec<_>>())),
                _ => s.ok("total", vec![], json!(counts.values().sum::<i64>())),
            }
        }
        s.ok("items", vec![], json!(counts.keys().collect::<Vec<_>>()));
        s.ok("total", vec![], json!(counts.values().sum::<i64>()));
        scenarios.push(s);
    }
    Class {
        name,
        source,
        scenarios,
    }
}

fn queue(g: &mut Gen, bug: [bool; 3]) -> Class {
    let name = *g.pick(&["BoundedQueue", "RingBuffer", "RecentItems", "Backlog"]);
    let full = if bug[1] { ">" } else { "==" };
    let pop = if bug[0] {
        "self._items.pop()"
    } else {
        "self._items.pop(0)"
    };
    let peek = if bug[2] { "-1" } else { "0" };
    let (first, second, third) = (g.int(1, 99), g.int(100, 499), g.int(500, 999));
    let example = format!(
        "    Example: q = {name}(2); after q.push({first}), q.push({second}), q.push({third}),\n        q.pop() returns {second}.\n"
    );
    let source = format!(
        "class {name}:\n    \"\"\"A first-in, first-out queue that holds at most `capacity` items.\n\n    {name}(capacity): an empty queue (capacity >= 1).\n    push(item): adds `item` at the back; when the queue is already full, the oldest item is\n        dropped first. Returns the number of items held.\n    pop(): removes and returns the oldest item; raises IndexError if the queue is empty.\n    peek(): the oldest item, without removing it; raises IndexError if the queue is empty.\n    size(): the number of items held.\n{example}    \"\"\"\n\n    def __init__(self, capacity):\n        self._capacity = capacity\n        self._items = []\n\n    def push(self, item):\n        if len(self._items) {full} self._capacity:\n            self._items.pop(0)\n        self._items.append(item)\n        return len(self._items)\n\n    def pop(self):\n        if not self._items:\n            raise IndexError(\"pop from an empty queue\")\n        return {pop}\n\n    def peek(self):\n        if not self._items:\n            raise IndexError(\"peek at an empty queue\")\n        return self._items[{peek}]\n\n    def size(self):\n        return len(self._items)\n"
    );
    let words = g.chance(0.5);
    let item = |g: &mut Gen| {
        if words {
            json!(g.word())
        } else {
            json!(g.int(-99, 999))
        }
    };
    let mut scenarios = Vec::new();
    // Exposes every bug: pushes past the capacity, then peek and pops.
    let capacity = g.int(2, 4) as usize;
    let mut s = Scenario::new(vec![json!(capacity)]);
    let mut held: std::collections::VecDeque<Value> = Default::default();
    for _ in 0..capacity + 2 {
        let x = item(g);
        if held.len() == capacity {
            held.pop_front();
        }
        held.push_back(x.clone());
        s.ok("push", vec![x], json!(held.len()));
    }
    s.ok("peek", vec![], held[0].clone());
    while let Some(x) = held.pop_front() {
        s.ok("pop", vec![], x);
    }
    s.raises("pop", vec![], "IndexError");
    scenarios.push(s);
    for _ in 0..6 {
        let capacity = g.int(1, 6) as usize;
        let mut held: std::collections::VecDeque<Value> = Default::default();
        let mut s = Scenario::new(vec![json!(capacity)]);
        for _ in 0..g.int(5, 14) {
            match g.index(6) {
                0..=2 => {
                    let x = item(g);
                    if held.len() == capacity {
                        held.pop_front();
                    }
                    held.push_back(x.clone());
                    s.ok("push", vec![x], json!(held.len()));
                }
                3 => match held.pop_front() {
                    Some(x) => s.ok("pop", vec![], x),
                    None => s.raises("pop", vec![], "IndexError"),
                },
                4 => match held.front() {
                    Some(x) => s.ok("peek", vec![], x.clone()),
                    None => s.raises("peek", vec![], "IndexError"),
                },
                _ => s.ok("size", vec![], json!(held.len())),
            }
        }
        s.ok("size", vec![], json!(held.len()));
        scenarios.push(s);
    }
    Class {
        name,
        source,
        scenarios,
    }
}

fn stats(g: &mut Gen, bug: [bool; 3]) -> Class {
    let name = *g.pick(&["RunningStats", "Summary", "Tally", "Accumulator"]);
    let max_start = if bug[1] { "0" } else { "None" };
    let max_update = if bug[1] {
        "max(self._max, x)"
    } else {
        "x if self._max is None else max(self._max, x)"
    };
    let mean = if bug[2] { "//" } else { "/" };
    let divisor = if bug[0] {
        "self._count"
    } else {
        "(self._count - 1)"
    };
    let (a, b) = (g.int(-50, 50), g.int(-50, 50));
    let example = format!(
        "    Example: after add({a}) and add({b}), mean() returns {}.\n",
        super::py_number((a + b) as f64 / 2.0)
    );
    let source = format!(
        "class {name}:\n    \"\"\"Summary statistics of the numbers added so far.\n\n    add(x): adds the number `x`; returns how many numbers have been added.\n    mean(): their mean; raises ValueError if none were added.\n    variance(): their sample variance (the squared deviations from the mean, summed and\n        divided by n - 1); raises ValueError if fewer than two were added.\n    minimum(), maximum(): the smallest and the largest; raise ValueError if none were added.\n{example}    \"\"\"\n\n    def __init__(self):\n        self._count = 0\n        self._sum = 0\n        self._squares = 0\n        self._min = None\n        self._max = {max_start}\n\n    def add(self, x):\n        self._count += 1\n        self._sum += x\n        self._squares += x * x\n        self._min = x if self._min is None else min(self._min, x)\n        self._max = {max_update}\n        return self._count\n\n    def mean(self):\n        if self._count == 0:\n            raise ValueError(\"no numbers yet\")\n        return self._sum {mean} self._count\n\n    def variance(self):\n        if self._count < 2:\n            raise ValueError(\"need at least two numbers\")\n        mean = self._sum / self._count\n        return (self._squares - self._count * mean * mean) / {divisor}\n\n    def minimum(self):\n        if self._count == 0:\n            raise ValueError(\"no numbers yet\")\n        return self._min\n\n    def maximum(self):\n        if self._count == 0:\n            raise ValueError(\"no numbers yet\")\n        return self._max\n"
    );
    let mut scenarios = Vec::new();
    // Exposes every bug: negative numbers only, with a mean that is not whole.
    let mut values: Vec<i64> = (0..3).map(|_| g.int(-90, -1)).collect();
    if values.iter().sum::<i64>() % 3 == 0 {
        values[0] -= 1;
    }
    let mut s = Scenario::new(vec![]);
    for (i, v) in values.iter().enumerate() {
        s.ok("add", vec![json!(v)], json!(i + 1));
    }
    let (mean, variance) = moments(&values);
    s.ok("mean", vec![], json!(mean));
    s.ok("variance", vec![], json!(variance));
    s.ok("maximum", vec![], json!(values.iter().max()));
    s.ok("minimum", vec![], json!(values.iter().min()));
    scenarios.push(s);
    for _ in 0..6 {
        let mut values: Vec<i64> = Vec::new();
        let mut s = Scenario::new(vec![]);
        for _ in 0..g.int(4, 14) {
            match g.index(6) {
                0..=2 => {
                    values.push(g.int(-100, 100));
                    s.ok("add", vec![json!(values.last())], json!(values.len()));
                }
                3 => match values.len() {
                    0 => s.raises("mean", vec![], "ValueError"),
                    _ => s.ok("mean", vec![], json!(moments(&values).0)),
                },
                4 => match values.len() {
                    0 | 1 => s.raises("variance", vec![], "ValueError"),
                    _ => s.ok("variance", vec![], json!(moments(&values).1)),
                },
                _ => {
                    let method = *g.pick(&["minimum", "maximum"]);
                    let extreme = if method == "minimum" {
                        values.iter().min()
                    } else {
                        values.iter().max()
                    };
                    match extreme {
                        Some(v) => s.ok(method, vec![], json!(v)),
                        None => s.raises(method, vec![], "ValueError"),
                    }
                }
            }
        }
        scenarios.push(s);
    }
    Class {
        name,
        source,
        scenarios,
    }
}

/// The mean and the sample variance (two passes); the variance is 0 for one value.
fn moments(values: &[i64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<i64>() as f64 / n;
    let squares: f64 = values.iter().map(|v| (*v as f64 - mean).powi(2)).sum();
    (
        mean,
        if values.len() > 1 {
            squares / (n - 1.0)
        } else {
            0.0
        },
    )
}
