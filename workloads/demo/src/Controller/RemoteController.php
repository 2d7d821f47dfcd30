<?php

declare(strict_types=1);

namespace Demo\Controller;

use Demo\Http\Request;
use Demo\Http\Response;
use Demo\Remote\RemoteServiceInterface;
use Demo\View\RendererInterface;

final class RemoteController extends AbstractController
{
    public function __construct(
        RendererInterface $view,
        private readonly RemoteServiceInterface $remote,
    ) {
        parent::__construct($view);
    }

    public function show(Request $request): Response
    {
        $status = $this->remote->fetchStatus('catalogue-sync');

        return $this->render('remote/show', [
            'title' => 'Upstream status',
            'status' => $status,
        ])->withHeader('Cache-Control', 'no-store');
    }
}
