import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { PING } from '@ask/ask-contracts';
@Injectable() class A { v = PING; }
@Injectable() class B { constructor(readonly a: A) {} }
@Module({ providers: [A, B] }) class M {}
(async () => { const app = await NestFactory.createApplicationContext(M, { logger: false }); console.log('DI:', app.get(B).a.v, process.argv.slice(2)); await app.close(); })();
