<?php

declare(strict_types=1);

namespace Demo\Controller;

use Demo\Http\JsonResponse;
use Demo\Http\Response;
use Demo\Http\Status;
use Demo\View\RendererInterface;

abstract class AbstractController
{
    public function __construct(protected readonly RendererInterface $view)
    {
    }

    /**
     * @param array<string, mixed> $data
     */
    protected function render(string $template, array $data = [], Status $status = Status::Ok): Response
    {
        return Response::html($this->view->render($template, $data), $status);
    }

    /**
     * @param array<string, mixed> $data
     */
    protected function json(array $data, Status $status = Status::Ok): JsonResponse
    {
        return new JsonResponse($data, $status);
    }
}
