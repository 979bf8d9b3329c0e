import { Body, Controller, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CurrentActor, RequireRole } from '../auth/auth.decorators.js';
import type { Actor } from '../auth/roles.js';
import { ZNodeParamsSchema } from './node-actions.dto.js';
import { ApiDoc } from '../openapi/api-doc.decorator.js';
import {
  ZNodeImageIdParamSchema,
  ZNodeImageRequestSchema,
  ZNodeImageSchema,
  ZNodeImageUploadQuerySchema,
  type TNodeImageRequest,
  type TNodeImageUploadQuery,
} from './node-images.dto.js';
import { InvalidInputError } from '../common/errors.js';
import { NodeImagesService } from './node-images.service.js';

@Controller('api/v1')
export class NodeImagesController {
  constructor(private readonly images: NodeImagesService) {}

  @Post('boards/:id/nodes/:node/image')
  @RequireRole('operator')
  @HttpCode(202)
  @ApiDoc({
    summary: 'Write an OS image from a URL onto one node’s eMMC, as a job (progress on the board’s timeline)',
    tags: ['nodes'],
    response: ZNodeImageSchema,
    status: 202,
  })
  start(
    @Param({ schema: ZNodeParamsSchema }) params: { id: string; node: number },
    @Body({ schema: ZNodeImageRequestSchema }) body: TNodeImageRequest,
    @CurrentActor() actor: Actor,
  ) {
    return this.images.start(params.id, params.node, body, actor);
  }

  @Post('boards/:id/nodes/:node/image/upload')
  @RequireRole('operator')
  @HttpCode(202)
  @ApiDoc({
    summary: 'Upload an OS image and write it onto one node’s eMMC, as a job (progress on the board’s timeline)',
    description:
      'The body is the image (application/octet-stream) with its Content-Length. The fleet manager streams it to ' +
      'its disk (never into memory), refuses it (413) when the length is over NODE_IMAGE_UPLOAD_MAX_BYTES and (400) ' +
      'when the bytes differ from `sha256`, then queues the same job as the URL form; the stored file is removed ' +
      'when the job ends.',
    tags: ['nodes'],
    response: ZNodeImageSchema,
    status: 202,
    binaryBody: {
      mediaType: 'application/octet-stream',
      description: 'The OS image, with its Content-Length',
      maxBytesSetting: 'NODE_IMAGE_UPLOAD_MAX_BYTES',
    },
  })
  async upload(
    @Param({ schema: ZNodeParamsSchema }) params: { id: string; node: number },
    @Query({ schema: ZNodeImageUploadQuerySchema }) query: TNodeImageUploadQuery,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @CurrentActor() actor: Actor,
  ) {
    // A refusal must not make the server read (and discard) gigabytes the client is still sending.
    reply.header('connection', 'close');
    const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/octet-stream') {
      throw new InvalidInputError(
        `send the image as Content-Type: application/octet-stream (got ${type === '' ? 'none' : type})`,
      );
    }
    const answer = await this.images.startUpload(
      params.id,
      params.node,
      query,
      request.headers['content-length'],
      request.raw,
      actor,
    );
    reply.removeHeader('connection');
    return answer;
  }

  @Get('node-images/:id')
  @RequireRole('viewer')
  @ApiDoc({
    summary: 'A node image job: status, bytes written, SHA-256 of what was sent',
    tags: ['nodes'],
    response: ZNodeImageSchema,
  })
  get(@Param({ schema: ZNodeImageIdParamSchema }) params: { id: string }) {
    return this.images.get(params.id);
  }
}
