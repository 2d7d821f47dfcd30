<?php
// The benchmark's operations: each revolution's commands and the check of their replies. Every reply is checked:
// a wrong answer fails the iteration.
declare(strict_types=1);

namespace Phptune;

const SPACE = 999;   // the benchmark space, created by phptune's init.lua
const TUPLES = 10000;

/**
 * An operation: the commands of one revolution and a check of their replies. Keys are random in 1..TUPLES;
 * $w is the worker's number (unique across processes and Fibers), $i the revolution.
 * @return array{0: callable(int, int): array, 1: callable(int, int, array, array): void}
 */
function op(string $target, string $name): array
{
    $k = fn() => mt_rand(1, TUPLES);
    $fail = function (string $what, mixed $got) use ($name) {
        throw new \RuntimeException("$name: $what, got " . json_encode($got));
    };
    // Checks that a reply body's data is exactly the expected tuples.
    $rows = function (array $body, ?array $want) use ($fail) {
        $got = $body[Iproto::DATA] ?? null;
        if ($want !== null && $got !== $want) {
            $fail('want ' . json_encode($want), $got);
        }
    };
    if ($target === 'tarantool') {
        $sel = fn($id) => [Iproto::SELECT, [Iproto::SPACE_ID => SPACE, Iproto::INDEX_ID => 0, Iproto::LIMIT => 1,
            Iproto::OFFSET => 0, Iproto::ITERATOR => 0, Iproto::KEY => [$id]]];
        $sql = fn(string $q, array $bind) => [Iproto::EXECUTE, [Iproto::SQL_TEXT => $q, Iproto::SQL_BIND => $bind]];
        return match ($name) {
            'select' => [function ($w, $i) use ($k, $sel) {
                return [$sel($k())];
            }, function ($w, $i, $cmds, $r) use ($fail) {
                $id = $cmds[0][1][Iproto::KEY][0];
                $t = $r[0][Iproto::DATA][0] ?? null;
                if (($t[0] ?? null) !== $id) {
                    $fail("select $id", $t);
                }
            }],
            'insert' => [fn($w, $i) => [[Iproto::INSERT, [Iproto::SPACE_ID => SPACE, Iproto::TUPLE => [null, "ins_$w"]]]],
                function ($w, $i, $cmds, $r) use ($fail) {
                    $t = $r[0][Iproto::DATA][0] ?? null;
                    if (!is_int($t[0] ?? null) || $t[0] <= TUPLES || $t[1] !== "ins_$w") {
                        $fail('insert with a new id from the sequence', $t);
                    }
                }],
            'replace' => [function ($w, $i) use ($k) {
                $id = $k();
                return [[Iproto::REPLACE, [Iproto::SPACE_ID => SPACE, Iproto::TUPLE => [$id, "tuple_$id"]]]];
            }, fn($w, $i, $cmds, $r) => $rows($r[0], [$cmds[0][1][Iproto::TUPLE]])],
            'update' => [function ($w, $i) use ($k) {
                $id = $k();
                return [[Iproto::UPDATE, [Iproto::SPACE_ID => SPACE, Iproto::INDEX_ID => 0, Iproto::KEY => [$id],
                    Iproto::TUPLE => [['=', 1, "upd_$id"]]]]];
            }, function ($w, $i, $cmds, $r) use ($rows) {
                $id = $cmds[0][1][Iproto::KEY][0];
                $rows($r[0], [[$id, "upd_$id"]]);
            }],
            'upsert' => [function ($w, $i) use ($k) {
                $id = $k();
                return [[Iproto::UPSERT, [Iproto::SPACE_ID => SPACE, Iproto::TUPLE => [$id, "ups_$id"],
                    Iproto::OPS => [['=', 1, "ups_$id"]]]]];
            }, fn($w, $i, $cmds, $r) => $rows($r[0], [])],
            'delete' => [function ($w, $i) use ($k) {
                return [[Iproto::DELETE, [Iproto::SPACE_ID => SPACE, Iproto::INDEX_ID => 0, Iproto::KEY => [$k()]]]];
            }, function ($w, $i, $cmds, $r) use ($fail) {
                $d = $r[0][Iproto::DATA] ?? null;
                if (!is_array($d) || count($d) > 1) {
                    $fail('delete of one key', $d);
                }
            }],
            'sql_select' => [function ($w, $i) use ($k, $sql) {
                return [$sql('SELECT "id", "name" FROM "bench" WHERE "id" = ?', [$k()])];
            }, function ($w, $i, $cmds, $r) use ($fail) {
                $id = $cmds[0][1][Iproto::SQL_BIND][0];
                $t = $r[0][Iproto::DATA][0] ?? null;
                if (($t[0] ?? null) !== $id) {
                    $fail("SQL select $id", $t);
                }
            }],
            'sql_insert' => [fn($w, $i) => [$sql('INSERT INTO "bench" VALUES (NULL, ?)', ["ins_$w"])],
                function ($w, $i, $cmds, $r) use ($fail) {
                    $n = $r[0][Iproto::SQL_INFO][0] ?? null;
                    if ($n !== 1) {
                        $fail('SQL insert of one row', $r[0]);
                    }
                }],
            'sql_replace' => [function ($w, $i) use ($k, $sql) {
                $id = $k();
                return [$sql('REPLACE INTO "bench" VALUES (?, ?)', [$id, "tuple_$id"])];
            }, function ($w, $i, $cmds, $r) use ($fail) {
                $n = $r[0][Iproto::SQL_INFO][0] ?? null;
                if ($n !== 1 && $n !== 2) { // a replace of an existing row counts a delete and an insert
                    $fail('SQL replace of one row', $r[0]);
                }
            }],
            'sql_update' => [function ($w, $i) use ($k, $sql) {
                $id = $k();
                return [$sql('UPDATE "bench" SET "name" = ? WHERE "id" = ?', ["upd_$id", $id])];
            }, function ($w, $i, $cmds, $r) use ($fail) {
                if (($r[0][Iproto::SQL_INFO][0] ?? null) !== 1) {
                    $fail('SQL update of one row', $r[0]);
                }
            }],
            'sql_delete' => [fn($w, $i) => [$sql('DELETE FROM "bench" WHERE "id" = ?', [$k()])],
                function ($w, $i, $cmds, $r) use ($fail) {
                    $n = $r[0][Iproto::SQL_INFO][0] ?? null;
                    if ($n !== 0 && $n !== 1) {
                        $fail('SQL delete of at most one row', $r[0]);
                    }
                }],
            // A server-side function that sleeps 10 ms: the proof that Fibers overlap their waits.
            'sleep' => [fn($w, $i) => [[Iproto::CALL, [Iproto::FUNCTION_NAME => 'phptune_sleep', Iproto::TUPLE => [0.01]]]],
                fn($w, $i, $cmds, $r) => $rows($r[0], [true])],
            // The answers checked end to end: a select returns the tuple inserted, an update changed it.
            'check' => [function ($w, $i) use ($sel) {
                $id = 1000000 + $w * 100000 + $i;
                return [
                    [Iproto::INSERT, [Iproto::SPACE_ID => SPACE, Iproto::TUPLE => [$id, "chk_$id"]]],
                    $sel($id),
                    [Iproto::UPDATE, [Iproto::SPACE_ID => SPACE, Iproto::INDEX_ID => 0, Iproto::KEY => [$id],
                        Iproto::TUPLE => [['=', 1, "new_$id"]]]],
                    $sel($id),
                    [Iproto::DELETE, [Iproto::SPACE_ID => SPACE, Iproto::INDEX_ID => 0, Iproto::KEY => [$id]]],
                    $sel($id),
                ];
            }, function ($w, $i, $cmds, $r) use ($rows) {
                $id = $cmds[0][1][Iproto::TUPLE][0];
                $rows($r[0], [[$id, "chk_$id"]]);
                $rows($r[1], [[$id, "chk_$id"]]);
                $rows($r[2], [[$id, "new_$id"]]);
                $rows($r[3], [[$id, "new_$id"]]);
                $rows($r[4], [[$id, "new_$id"]]);
                $rows($r[5], []);
            }],
            default => throw new \InvalidArgumentException("unknown Tarantool operation $name"),
        };
    }
    return match ($name) {
        'get' => [fn($w, $i) => [['GET', 'key:' . $k()]], function ($w, $i, $cmds, $r) use ($fail) {
            $want = 'value_' . substr($cmds[0][1], 4);
            if ($r[0] !== $want) {
                $fail("GET {$cmds[0][1]}", $r[0]);
            }
        }],
        'set' => [function ($w, $i) use ($k) {
            $id = $k();
            return [['SET', "key:$id", "value_$id"]];
        }, function ($w, $i, $cmds, $r) use ($fail) {
            if ($r[0] !== 'OK') {
                $fail('SET', $r[0]);
            }
        }],
        'incr' => [fn($w, $i) => [['INCR', "counter:$w"]], function ($w, $i, $cmds, $r) use ($fail) {
            if (!is_int($r[0]) || $r[0] < 1) {
                $fail('INCR', $r[0]);
            }
        }],
        'check' => [function ($w, $i) {
            $key = "chk:$w:$i";
            return [['SET', $key, "v_$i"], ['GET', $key], ['INCR', "$key:n"], ['INCR', "$key:n"], ['DEL', $key, "$key:n"], ['GET', $key]];
        }, function ($w, $i, $cmds, $r) use ($fail) {
            if ($r !== ['OK', "v_$i", 1, 2, 2, null]) {
                $fail('SET, GET, INCR x2, DEL, GET', $r);
            }
        }],
        default => throw new \InvalidArgumentException("unknown Redis operation $name"),
    };
}
