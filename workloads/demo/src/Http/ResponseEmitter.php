<?php

declare(strict_types=1);

namespace Demo\Http;

/**
 * Sends status line, headers and body through the SAPI.
 */
final class ResponseEmitter
{
    public function emit(Response $response): void
    {
        $status = $response->status();

        if (!headers_sent()) {
            http_response_code($status->value);
            foreach ($response->headers->all() as $name => $values) {
                foreach ($values as $i => $value) {
                    header($name . ': ' . $value, $i === 0);
                }
            }
        }

        if ($status->hasBody()) {
            echo $response->body();
        }
    }
}
