<?php

declare(strict_types=1);

/*
 * Front controller of the phptune demo application.
 * nginx: try_files $uri /index.php$is_args$args;
 */

use Demo\Autoloader;
use Demo\Http\Request;
use Demo\Http\ResponseEmitter;
use Demo\Kernel;

$startedAt = hrtime(true);

error_reporting(E_ALL);
set_error_handler(static function (int $severity, string $message, string $file, int $line): bool {
    if ((error_reporting() & $severity) === 0) {
        return false;
    }
    throw new ErrorException($message, 0, $severity, $file, $line);
});

// With opcache.preload (preload.php) the class is already declared.
if (!class_exists(Autoloader::class, false)) {
    require __DIR__ . '/src/Autoloader.php';
}

(new Autoloader('Demo\\', __DIR__ . '/src'))->register();

$kernel = new Kernel(__DIR__);
$response = $kernel->handle(Request::fromGlobals($_SERVER, $_GET, $_POST, $startedAt));
(new ResponseEmitter())->emit($response);
