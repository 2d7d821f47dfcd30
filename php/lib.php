<?php
// phptune clients: a Fiber scheduler on stream_select, an IPROTO client (Tarantool) and a RESP client (Redis).
// Each client is written once: called outside a Fiber it blocks on stream_select; inside a Fiber it suspends
// whenever its socket would block, and Loop::run resumes it when the socket is ready.
declare(strict_types=1);

namespace Phptune;

final class Loop
{
    /**
     * Waits until $stream is readable ('r'), writable ('w') or either ('rw'): suspends the current Fiber, or
     * blocks outside one.
     */
    public static function wait($stream, string $mode): void
    {
        if (\Fiber::getCurrent() !== null) {
            \Fiber::suspend([$mode, $stream]);
            return;
        }
        $r = $mode !== 'w' ? [$stream] : [];
        $w = $mode !== 'r' ? [$stream] : [];
        $e = [];
        if (@stream_select($r, $w, $e, null) === false) {
            throw new \RuntimeException('stream_select failed');
        }
    }

    /**
     * Runs each task in its own Fiber and resumes them as their sockets become ready; returns when all have
     * finished. An exception in a task ends the run.
     * @param callable[] $tasks
     */
    public static function run(array $tasks): void
    {
        $waiting = []; // task index => [mode, stream, fiber]
        foreach ($tasks as $i => $task) {
            $f = new \Fiber($task);
            $w = $f->start();
            if (!$f->isTerminated()) {
                $waiting[$i] = [$w[0], $w[1], $f];
            }
        }
        while ($waiting) {
            $r = $w = $e = [];
            foreach ($waiting as $i => $t) {
                if ($t[0] !== 'w') {
                    $r[$i] = $t[1];
                }
                if ($t[0] !== 'r') {
                    $w[$i] = $t[1];
                }
            }
            if (@stream_select($r, $w, $e, null) === false) {
                throw new \RuntimeException('stream_select failed');
            }
            // stream_select keeps the keys: they are the task indexes.
            foreach ($r + $w as $i => $_) {
                $f = $waiting[$i][2];
                $next = $f->resume();
                if ($f->isTerminated()) {
                    unset($waiting[$i]);
                } else {
                    $waiting[$i] = [$next[0], $next[1], $f];
                }
            }
        }
    }
}

/** A reply the server sent as an error (IPROTO error code, RESP "-ERR"). */
final class ServerError extends \RuntimeException
{
}

/** A non-blocking stream connection with an input buffer; subclasses frame the protocol. */
abstract class StreamConn
{
    /** @var resource */
    protected $s;
    protected string $in = '';
    protected int $off = 0;
    protected string $out = '';
    /** A request just went out: its reply cannot be there yet, so wait before reading (saves a read call). */
    protected bool $sent = false;
    /** Reads that returned data (the codec tests check that a reply was split across reads). */
    public int $reads = 0;

    public function __construct(string $host, int $port, float $timeout = 5.0)
    {
        $ctx = stream_context_create(['socket' => ['tcp_nodelay' => true]]);
        $s = @stream_socket_client("tcp://$host:$port", $errno, $errstr, $timeout, STREAM_CLIENT_CONNECT, $ctx);
        if ($s === false) {
            throw new \RuntimeException("connect to $host:$port: $errstr ($errno)");
        }
        stream_set_blocking($s, false);
        stream_set_read_buffer($s, 0);
        stream_set_write_buffer($s, 0);
        $this->s = $s;
    }

    public function close(): void
    {
        if (is_resource($this->s)) {
            fclose($this->s);
        }
    }

    /** Queues bytes; flush sends them. */
    protected function queue(string $bytes): void
    {
        $this->out .= $bytes;
    }

    public function flush(): void
    {
        while ($this->out !== '') {
            $n = @fwrite($this->s, $this->out);
            if ($n === false) {
                throw new \RuntimeException('write failed: connection lost');
            }
            if ($n === 0) {
                // A deep pipeline: take in replies while waiting to write, or a server that stops reading until
                // its replies are read would wait for us forever.
                Loop::wait($this->s, 'rw');
                $this->drain();
                continue;
            }
            $this->out = (string)substr($this->out, $n);
        }
        $this->sent = true;
    }

    /** Reads what the socket has without waiting. */
    private function drain(): void
    {
        $d = @fread($this->s, 65536);
        if ($d !== false && $d !== '') {
            $this->in .= $d;
            $this->reads++;
        }
    }

    /** Reads whatever the socket has, waiting (or suspending) until at least one byte arrives. */
    protected function fill(): void
    {
        if ($this->off > 0) {
            $this->in = (string)substr($this->in, $this->off);
            $this->off = 0;
        }
        if ($this->sent) {
            $this->sent = false;
            Loop::wait($this->s, 'r');
        }
        for (;;) {
            $d = @fread($this->s, 65536);
            if ($d !== false && $d !== '') {
                $this->in .= $d;
                $this->reads++;
                return;
            }
            if (feof($this->s)) {
                throw new \RuntimeException('connection closed by the server');
            }
            Loop::wait($this->s, 'r');
        }
    }

    /** Reads exactly $n bytes (the IPROTO greeting). */
    protected function readExact(int $n): string
    {
        while (strlen($this->in) - $this->off < $n) {
            $this->fill();
        }
        $b = substr($this->in, $this->off, $n);
        $this->off += $n;
        return $b;
    }

    /** Sends the commands and returns their replies in order: one round trip, or a pipeline when more than one. */
    public function roundTrip(array $cmds): array
    {
        foreach ($cmds as $c) {
            $this->send($c);
        }
        $this->flush();
        $out = [];
        foreach ($cmds as $_) {
            $out[] = $this->recv();
        }
        return $out;
    }

    abstract public function send(array $cmd): void;

    abstract public function recv(): mixed;
}

/** Tarantool's binary protocol (IPROTO) over msgpack (ext-msgpack). */
final class Iproto extends StreamConn
{
    public const SELECT = 0x01, INSERT = 0x02, REPLACE = 0x03, UPDATE = 0x04, DELETE = 0x05, EVAL = 0x08,
        UPSERT = 0x09, CALL = 0x0a, EXECUTE = 0x0b, PING = 0x40;
    public const SPACE_ID = 0x10, INDEX_ID = 0x11, LIMIT = 0x12, OFFSET = 0x13, ITERATOR = 0x14, KEY = 0x20,
        TUPLE = 0x21, FUNCTION_NAME = 0x22, EXPR = 0x27, OPS = 0x28, DATA = 0x30, ERROR = 0x31, SQL_TEXT = 0x40,
        SQL_BIND = 0x41, SQL_INFO = 0x42;

    private int $sync = 0;
    private \MessagePackUnpacker $u;

    public function __construct(string $host, int $port)
    {
        parent::__construct($host, $port);
        $this->u = new \MessagePackUnpacker();
        $g = $this->readExact(128);
        if (!str_starts_with($g, 'Tarantool')) {
            throw new \RuntimeException("$host:$port is not Tarantool (greeting " . json_encode(substr($g, 0, 20)) . ')');
        }
    }

    /** A msgpack map with integer keys: ext-msgpack packs keys 0, 1, ... (and []) as a list, so those by hand. */
    public static function map(array $kv): string
    {
        if (!array_is_list($kv)) {
            return msgpack_pack($kv);
        }
        $n = count($kv);
        $out = $n < 16 ? chr(0x80 | $n) : "\xde" . pack('n', $n);
        foreach ($kv as $k => $v) {
            $out .= msgpack_pack($k) . msgpack_pack($v);
        }
        return $out;
    }

    /** One request packet: msgpack size (uint32), header map {0x00 type, 0x01 sync}, body map. */
    public static function encode(int $type, int $sync, array $body): string
    {
        // The header by hand: every request type is a positive fixint.
        $p = "\x82\x00" . chr($type) . "\x01" . msgpack_pack($sync) . self::map($body);
        return "\xce" . pack('N', strlen($p)) . $p;
    }

    /**
     * Decodes the packet at $off in $buf and advances $off past it; null (and $off unchanged) when the buffer does
     * not hold a whole packet yet.
     * @return array{0: array, 1: array}|null [header, body]
     */
    public static function decode(string $buf, int &$off, ?\MessagePackUnpacker $u = null): ?array
    {
        $have = strlen($buf) - $off;
        if ($have < 1) {
            return null;
        }
        $b = ord($buf[$off]);
        [$hl, $size] = match (true) {
            $b <= 0x7f => [1, $b],
            $b === 0xcc => [2, null],
            $b === 0xcd => [3, null],
            $b === 0xce => [5, null],
            $b === 0xcf => [9, null],
            default => throw new \RuntimeException(sprintf('IPROTO: bad packet length prefix 0x%02x', $b)),
        };
        if ($have < $hl) {
            return null;
        }
        if ($size === null) {
            $size = match ($hl) {
                2 => ord($buf[$off + 1]),
                3 => unpack('n', $buf, $off + 1)[1],
                5 => unpack('N', $buf, $off + 1)[1],
                9 => unpack('J', $buf, $off + 1)[1],
            };
        }
        if ($have < $hl + $size) {
            return null;
        }
        // Unpacked in place, from the offset: no copy of the packet.
        $u ??= new \MessagePackUnpacker();
        $u->reset();
        $p = $off + $hl;
        $end = $p + $size;
        if (!$u->execute($buf, $p) || $p > $end) {
            throw new \RuntimeException('IPROTO: bad header');
        }
        $header = $u->data();
        $body = [];
        if ($p < $end) {
            $u->reset();
            if (!$u->execute($buf, $p) || $p !== $end) {
                throw new \RuntimeException('IPROTO: bad body');
            }
            $body = $u->data();
        }
        // ext-msgpack decodes an empty map as an empty stdClass.
        if ($body instanceof \stdClass) {
            $body = (array)$body;
        }
        if (!is_array($header) || !is_array($body)) {
            throw new \RuntimeException('IPROTO: header or body is not a map');
        }
        $off += $hl + $size;
        return [$header, $body];
    }

    /** $cmd is [type, body map]. */
    public function send(array $cmd): void
    {
        $this->queue(self::encode($cmd[0], ++$this->sync, $cmd[1]));
    }

    /** The next reply's body; a server error throws ServerError. */
    public function recv(): mixed
    {
        for (;;) {
            $r = self::decode($this->in, $this->off, $this->u);
            if ($r !== null) {
                break;
            }
            $this->fill();
        }
        [$h, $body] = $r;
        $code = $h[0x00] ?? -1;
        if ($code !== 0) {
            throw new ServerError(sprintf('Tarantool error 0x%x: %s', $code & 0x7fff, $body[self::ERROR] ?? '?'));
        }
        return $body;
    }

    public function call(string $fn, array $args = []): array
    {
        return $this->roundTrip([[self::CALL, [self::FUNCTION_NAME => $fn, self::TUPLE => $args]]])[0][self::DATA] ?? [];
    }
}

/** Redis's protocol (RESP2). */
final class Resp extends StreamConn
{
    /** One command as a RESP array of bulk strings. */
    public static function encode(array $args): string
    {
        $out = '*' . count($args) . "\r\n";
        foreach ($args as $a) {
            $a = (string)$a;
            $out .= '$' . strlen($a) . "\r\n" . $a . "\r\n";
        }
        return $out;
    }

    /**
     * Decodes the reply at $off and advances $off past it; null (and $off unchanged) when the buffer does not hold
     * a whole reply yet. The reply is wrapped in a one-element array, since a reply may itself be null.
     */
    public static function decode(string $buf, int &$off): ?array
    {
        $p = $off;
        $ok = self::parse($buf, $p, $v);
        if (!$ok) {
            return null;
        }
        $off = $p;
        return [$v];
    }

    private static function parse(string $buf, int &$p, mixed &$v): bool
    {
        $eol = strpos($buf, "\r\n", $p);
        if ($eol === false) {
            return false;
        }
        $t = $buf[$p];
        $line = substr($buf, $p + 1, $eol - $p - 1);
        switch ($t) {
            case '+':
                $v = $line;
                $p = $eol + 2;
                return true;
            case '-':
                $v = new ServerError('Redis error: ' . $line);
                $p = $eol + 2;
                return true;
            case ':':
                $v = (int)$line;
                $p = $eol + 2;
                return true;
            case '$':
                $n = (int)$line;
                if ($n < 0) {
                    $v = null;
                    $p = $eol + 2;
                    return true;
                }
                if (strlen($buf) < $eol + 2 + $n + 2) {
                    return false;
                }
                $v = substr($buf, $eol + 2, $n);
                $p = $eol + 2 + $n + 2;
                return true;
            case '*':
                $n = (int)$line;
                $q = $eol + 2;
                if ($n < 0) {
                    $v = null;
                    $p = $q;
                    return true;
                }
                $items = [];
                for ($i = 0; $i < $n; $i++) {
                    if (!self::parse($buf, $q, $item)) {
                        return false;
                    }
                    $items[] = $item;
                }
                $v = $items;
                $p = $q;
                return true;
        }
        throw new \RuntimeException('RESP: bad reply type ' . json_encode($t));
    }

    /** $cmd is the command's arguments, e.g. ['GET', 'key:1']. */
    public function send(array $cmd): void
    {
        $this->queue(self::encode($cmd));
    }

    /** The next reply; an error reply throws ServerError. */
    public function recv(): mixed
    {
        for (;;) {
            $r = self::decode($this->in, $this->off);
            if ($r !== null) {
                break;
            }
            $this->fill();
        }
        if ($r[0] instanceof ServerError) {
            throw $r[0];
        }
        return $r[0];
    }
}

/** phpredis (the C extension) behind the same roundTrip, its replies shaped like Resp's: the C baseline. */
final class PhpRedis
{
    private \Redis $r;

    public function __construct(string $host, int $port)
    {
        $this->r = new \Redis();
        if (!$this->r->connect($host, $port, 5.0)) {
            throw new \RuntimeException("phpredis: connect to $host:$port failed");
        }
    }

    public function close(): void
    {
        $this->r->close();
    }

    public function roundTrip(array $cmds): array
    {
        if (count($cmds) === 1) {
            return [self::shape($cmds[0][0], self::one($this->r, $cmds[0]))];
        }
        $p = $this->r->pipeline();
        foreach ($cmds as $c) {
            self::one($p, $c);
        }
        $res = $p->exec();
        $out = [];
        foreach ($cmds as $i => $c) {
            $out[] = self::shape($c[0], $res[$i]);
        }
        return $out;
    }

    private static function one($r, array $c): mixed
    {
        return match ($c[0]) {
            'GET' => $r->get($c[1]),
            'SET' => $r->set($c[1], $c[2]),
            'INCR' => $r->incr($c[1]),
            'DEL' => $r->del(...array_slice($c, 1)),
            default => $r->rawCommand(...$c),
        };
    }

    private static function shape(string $cmd, mixed $v): mixed
    {
        return match (true) {
            $cmd === 'SET' && $v === true => 'OK',
            $cmd === 'GET' && $v === false => null,
            default => $v,
        };
    }
}
