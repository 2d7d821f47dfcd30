<?php

declare(strict_types=1);

namespace Demo\Controller;

use Demo\Domain\ContactMessage;
use Demo\Http\Request;
use Demo\Http\Response;
use Demo\Http\Status;
use Demo\Validation\Email;
use Demo\Validation\Length;
use Demo\Validation\MaxLinks;
use Demo\Validation\Required;
use Demo\Validation\Validator;
use Demo\View\RendererInterface;

final class ContactController extends AbstractController
{
    public function __construct(RendererInterface $view)
    {
        parent::__construct($view);
    }

    public function form(Request $request): Response
    {
        return $this->render('contact/form', [
            'title' => 'Contact',
            'values' => ['name' => '', 'email' => '', 'message' => ''],
            'errors' => [],
        ])->withHeader('Cache-Control', 'public, max-age=300');
    }

    public function submit(Request $request): Response
    {
        $result = $this->validator()->validate($request->body());

        if (!$result->isValid()) {
            return $this->render('contact/form', [
                'title' => 'Contact – please check the form',
                'values' => $result->values,
                'errors' => $result->errors,
            ], Status::UnprocessableContent)->withHeader('Cache-Control', 'no-store');
        }

        $message = ContactMessage::fromValidated($result);

        return $this->render('contact/thanks', [
            'title' => 'Thank you',
            'message' => $message,
        ])->withHeader('Cache-Control', 'no-store');
    }

    private function validator(): Validator
    {
        return (new Validator())
            ->field('name', 'Name', new Required(), new Length(2, 80))
            ->field('email', 'E-mail', new Required(), new Length(3, 254), new Email())
            ->field('message', 'Message', new Required(), new Length(10, 4000), new MaxLinks(3));
    }
}
