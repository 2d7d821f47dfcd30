<?php

declare(strict_types=1);

/*
 * opcache.preload script of the phptune demo application: compiles and links every class of src/ once, in
 * php-fpm's master, so that requests find them already declared.
 */

require_once __DIR__ . '/src/Autoloader.php';

(new Demo\Autoloader('Demo\\', __DIR__ . '/src'))->register();

$src = __DIR__ . '/src/';
$files = new RecursiveIteratorIterator(new RecursiveDirectoryIterator($src, FilesystemIterator::SKIP_DOTS));
foreach ($files as $file) {
    if ($file->getExtension() !== 'php') {
        continue;
    }
    $name = 'Demo\\' . str_replace('/', '\\', substr($file->getPathname(), strlen($src), -4));
    // Loading through the autoloader declares parents and interfaces first.
    class_exists($name) || interface_exists($name) || trait_exists($name) || enum_exists($name);
}
