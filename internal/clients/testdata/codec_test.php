<?php
// Codec tests for phptune's IPROTO and RESP clients, run by codec_test.go: php -n -d extension=msgpack
// codec_test.php LIB. Expected bytes are written out by hand, not produced by the code under test. Prints
// "ok N" after N passed checks; any failure prints "FAIL ..." and exits 1.
declare(strict_types=1);

namespace Phptune;

require $argv[1];
require dirname($argv[1]) . '/ops.php';

$checks = 0;
function check(bool $ok, string $what, mixed $got = null): void
{
    global $checks;
    if (!$ok) {
        echo "FAIL $what: got ", var_export($got, true), "\n";
        exit(1);
    }
    $checks++;
}

function h(string $hex): string
{
    return hex2bin(str_replace(' ', '', $hex));
}

// IPROTO request: size as uint32, header {0x00: type, 0x01: sync} as a map (not a list), body map.
$got = Iproto::encode(Iproto::SELECT, 7, [Iproto::SPACE_ID => 999, Iproto::KEY => [5]]);
check($got === h('ce 0000000d  82 00 01 01 07  82 10 cd03e7 20 91 05'), 'IPROTO select request bytes', bin2hex($got));
$got = Iproto::encode(Iproto::PING, 1, []);
check($got === h('ce 00000006  82 00 40 01 01  80'), 'IPROTO ping: empty body is an empty map', bin2hex($got));
$got = Iproto::encode(Iproto::EXECUTE, 2, [Iproto::SQL_TEXT => 'SELECT 1', Iproto::SQL_BIND => []]);
check($got === h('ce 00000012  82 00 0b 01 02  82 40 a853454c4543542031 41 90'), 'IPROTO execute bytes', bin2hex($got));

// IPROTO replies: header {0: code, 1: sync, 5: schema}, body {0x30: data}.
$ok = h('ce 00000018  83 00 00 01 07 05 ce00000050  81 30 91 92 05 a7 7475706c655f35');
$off = 0;
$r = Iproto::decode($ok, $off);
check($r === [[0 => 0, 1 => 7, 5 => 80], [0x30 => [[5, 'tuple_5']]]], 'IPROTO reply decoded', $r);
check($off === strlen($ok), 'IPROTO offset past the packet', $off);
// Split at every byte: nothing until the last byte arrives, and the offset does not move.
for ($n = 0; $n < strlen($ok); $n++) {
    $off = 0;
    $r = Iproto::decode(substr($ok, 0, $n), $off);
    check($r === null && $off === 0, "IPROTO reply cut at $n bytes is incomplete", [$r, $off]);
}
// Two packets in one read, with other size prefixes (fixint, uint8).
$err = h('0d  82 00 cd8003 01 08  81 31 a3 62 6164'); // code 0x8003, error "bad"
$small = h('cc 06  82 00 00 01 09  80');
$buf = $err . $small;
$off = 0;
$a = Iproto::decode($buf, $off);
$b = Iproto::decode($buf, $off);
check($a === [[0 => 0x8003, 1 => 8], [0x31 => 'bad']], 'IPROTO error reply', $a);
check($b === [[0 => 0, 1 => 9], []], 'IPROTO second packet, uint8 size', $b);
check($off === strlen($buf) && Iproto::decode($buf, $off) === null, 'IPROTO nothing after two packets', $off);
try {
    $off = 0;
    Iproto::decode("\xa1x", $off);
    check(false, 'IPROTO bad size prefix must throw');
} catch (\RuntimeException $e) {
    check(str_contains($e->getMessage(), 'bad packet length'), 'IPROTO bad prefix message', $e->getMessage());
}

// RESP requests.
$got = Resp::encode(['SET', 'key:1', 'value_1']);
check($got === "*3\r\n\$3\r\nSET\r\n\$5\r\nkey:1\r\n\$7\r\nvalue_1\r\n", 'RESP request bytes', $got);

// RESP replies of every type, back to back, then split at every byte.
$stream = "+OK\r\n-ERR wrong\r\n:42\r\n\$-1\r\n\$5\r\nab\r\nc\r\n*2\r\n:1\r\n*1\r\n\$0\r\n\r\n*-1\r\n";
$want = ['OK', 'ERR', 42, null, "ab\r\nc", [1, ['']], null];
$off = 0;
$all = [];
while (($r = Resp::decode($stream, $off)) !== null) {
    $all[] = $r[0] instanceof ServerError ? 'ERR' : $r[0];
}
check($all === $want, 'RESP replies decoded', $all);
check($off === strlen($stream), 'RESP offset at the end', $off);
$bulk = "\$5\r\nab\r\nc\r\n";
for ($n = 0; $n < strlen($bulk); $n++) {
    $off = 0;
    check(Resp::decode(substr($bulk, 0, $n), $off) === null && $off === 0, "RESP bulk cut at $n is incomplete");
}
$arr = "*2\r\n:1\r\n\$2\r\nhi\r\n";
for ($n = 0; $n < strlen($arr); $n++) {
    $off = 0;
    check(Resp::decode(substr($arr, 0, $n), $off) === null && $off === 0, "RESP array cut at $n is incomplete");
}

// A reply split across reads on a real socket, inside Fibers: the reader suspends between the halves.
$srv = stream_socket_server('tcp://127.0.0.1:0', $errno, $errstr);
check($srv !== false, 'listen', $errstr);
$port = (int)substr(strrchr(stream_socket_get_name($srv, false), ':'), 1);
$c = new Resp('127.0.0.1', $port);
$peer = stream_socket_accept($srv, 5);
$reply = "\$11\r\nhello world\r\n";
$got = null;
$log = [];
Loop::run([
    function () use ($c, &$got, &$log) {
        $log[] = 'send';
        $got = $c->roundTrip([['GET', 'k']])[0];
        $log[] = 'got';
    },
    function () use ($peer, $reply, &$log) {
        $req = '';
        while (!str_ends_with($req, "\r\nk\r\n")) {
            \Fiber::suspend(['r', $peer]);
            $req .= fread($peer, 100);
        }
        fwrite($peer, substr($reply, 0, 9));
        $log[] = 'half';
        \Fiber::suspend(['w', $peer]); // yield once: the reader runs and finds half a reply
        \Fiber::suspend(['w', $peer]);
        fwrite($peer, substr($reply, 9));
        $log[] = 'rest';
    },
]);
check($got === 'hello world', 'RESP reply split across reads, in Fibers', $got);
check($log === ['send', 'half', 'rest', 'got'], 'the reader waited for the second half', $log);
check($c->reads === 2, 'two reads for one reply', $c->reads);

// The same without Fibers: a blocking read across two writes from a forked writer.
$pid = pcntl_fork();
if ($pid === 0) {
    $c->close();
    $req = '';
    while (!str_ends_with($req, "\r\nk\r\n")) {
        $req .= fread($peer, 100);
    }
    fwrite($peer, substr($reply, 0, 9));
    usleep(300000); // long enough for the parent to read the first half even on a busy machine
    fwrite($peer, substr($reply, 9));
    exit(0);
}
$t0 = hrtime(true);
$got = $c->roundTrip([['GET', 'k']])[0];
pcntl_waitpid($pid, $st);
check($got === 'hello world' && (hrtime(true) - $t0) > 290e6, 'RESP reply split across reads, blocking', $got);
check($c->reads === 4, 'two more reads', $c->reads);

// A peer that answers before it reads (as a server does whose replies to a deep pipeline fill the socket): the
// client must take in replies while its own write would block, or both wait forever. SIGALRM ends a deadlock.
$big = str_repeat('x', 8 << 20);
$pid = pcntl_fork();
if ($pid === 0) {
    $c->close(); // the client's end is the parent's: should it die, this child's write fails and it exits
    stream_set_blocking($peer, true);
    fwrite($peer, '$' . strlen($big) . "\r\n" . $big . "\r\n");
    $n = 0;
    while ($n < strlen($big) && ($d = fread($peer, 1 << 16)) !== false && $d !== '') {
        $n += strlen($d);
    }
    exit(0);
}
pcntl_alarm(20);
$got = $c->roundTrip([['SET', 'big', $big]])[0];
pcntl_alarm(0);
pcntl_waitpid($pid, $st);
check($got === $big, 'an 8 MiB reply taken in while an 8 MiB request was still being written', strlen((string)$got));

// The operations' checks accept the right answers and reject wrong ones.
function rejects(callable $check, array $args, string $what): void
{
    try {
        $check(...$args);
    } catch (\RuntimeException $e) {
        check(true, $what);
        return;
    }
    check(false, "$what: a wrong answer passed");
}

[$make, $chk] = op('tarantool', 'check');
$cmds = $make(3, 7);
$id = 1000000 + 3 * 100000 + 7;
check($cmds[0] === [Iproto::INSERT, [Iproto::SPACE_ID => SPACE, Iproto::TUPLE => [$id, "chk_$id"]]], 'check inserts first', $cmds[0]);
$data = fn(...$t) => [Iproto::DATA => $t];
$good = [$data([$id, "chk_$id"]), $data([$id, "chk_$id"]), $data([$id, "new_$id"]), $data([$id, "new_$id"]), $data([$id, "new_$id"]), $data()];
$chk(3, 7, $cmds, $good);
check(true, 'Tarantool check accepts the right answers');
$bad = $good;
$bad[3] = $data([$id, "chk_$id"]); // the update did not change the tuple
rejects($chk, [3, 7, $cmds, $bad], 'Tarantool check rejects an update that changed nothing');
$bad = $good;
$bad[1] = $data(); // the select did not return the tuple inserted
rejects($chk, [3, 7, $cmds, $bad], 'Tarantool check rejects a select without the inserted tuple');
$bad = $good;
$bad[5] = $data([$id, "new_$id"]); // the delete did not delete
rejects($chk, [3, 7, $cmds, $bad], 'Tarantool check rejects a delete that left the tuple');

[$make, $chk] = op('tarantool', 'select');
$cmds = $make(0, 0);
$key = $cmds[0][1][Iproto::KEY][0];
check($key >= 1 && $key <= TUPLES, 'select key in range', $key);
$chk(0, 0, $cmds, [$data([$key, "tuple_$key"])]);
rejects($chk, [0, 0, $cmds, [$data([$key + 1, 'tuple_x'])]], 'select rejects another tuple');
rejects($chk, [0, 0, $cmds, [$data()]], 'select rejects no tuple');

[$make, $chk] = op('redis', 'check');
$cmds = $make(2, 5);
$chk(2, 5, $cmds, ['OK', 'v_5', 1, 2, 2, null]);
check(true, 'Redis check accepts the right answers');
rejects($chk, [2, 5, $cmds, ['OK', 'v_4', 1, 2, 2, null]], 'Redis check rejects a wrong GET');
rejects($chk, [2, 5, $cmds, ['OK', 'v_5', 1, 2, 1, null]], 'Redis check rejects a DEL of one key');
[$make, $chk] = op('redis', 'get');
$cmds = $make(0, 0);
$n = substr($cmds[0][1], 4);
$chk(0, 0, $cmds, ["value_$n"]);
rejects($chk, [0, 0, $cmds, [null]], 'GET rejects a missing key');

echo "ok $checks\n";
