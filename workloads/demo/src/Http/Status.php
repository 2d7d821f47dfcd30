<?php

declare(strict_types=1);

namespace Demo\Http;

enum Status: int
{
    case Ok = 200;
    case NotModified = 304;
    case BadRequest = 400;
    case NotFound = 404;
    case MethodNotAllowed = 405;
    case UnprocessableContent = 422;
    case InternalServerError = 500;

    public function reason(): string
    {
        return match ($this) {
            self::Ok => 'OK',
            self::NotModified => 'Not Modified',
            self::BadRequest => 'Bad Request',
            self::NotFound => 'Not Found',
            self::MethodNotAllowed => 'Method Not Allowed',
            self::UnprocessableContent => 'Unprocessable Content',
            self::InternalServerError => 'Internal Server Error',
        };
    }

    public function hasBody(): bool
    {
        return $this !== self::NotModified;
    }
}
