<?php

declare(strict_types=1);

namespace Demo\Http;

final class JsonResponse extends Response
{
    private const FLAGS = JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE;

    /**
     * @param array<string, mixed> $data
     */
    public function __construct(array $data, Status $status = Status::Ok)
    {
        parent::__construct(
            json_encode($data, self::FLAGS) . "\n",
            $status,
            ['Content-Type' => 'application/json; charset=UTF-8'],
        );
    }
}
