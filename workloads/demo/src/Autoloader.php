<?php

declare(strict_types=1);

namespace Demo;

/**
 * Minimal PSR-4 autoloader: maps "Demo\Foo\Bar" to "<baseDir>/Foo/Bar.php".
 */
final class Autoloader
{
    private readonly string $prefix;
    private readonly string $baseDir;

    public function __construct(string $prefix, string $baseDir)
    {
        $this->prefix = trim($prefix, '\\') . '\\';
        $this->baseDir = rtrim($baseDir, '/');
    }

    public function register(): void
    {
        spl_autoload_register($this->load(...), true, true);
    }

    public function load(string $class): void
    {
        if (!str_starts_with($class, $this->prefix)) {
            return;
        }

        $relative = substr($class, strlen($this->prefix));
        if ($relative === '' || preg_match('/^[A-Za-z0-9_\\\\]+$/', $relative) !== 1) {
            return;
        }

        $file = $this->baseDir . '/' . str_replace('\\', '/', $relative) . '.php';
        if (is_file($file)) {
            require $file;
        }
    }
}
