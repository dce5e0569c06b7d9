"""The properties axis: what holds across every call rather than in one flow. No secret in a
repr, a log line or an exception; objects that pickle and come back working; reprs a notebook user
can read; hostile, fuzzed and unreadable arguments refused by name without a crash; wrong
arguments named; options that keep secrets at their origin; calls in forked children and at
interpreter exit; logging; proxies; and what a misbehaving server cannot make the client do."""
